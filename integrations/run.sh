#!/usr/bin/env bash
# Tests engram with the real clients agents run, each against a real
# `engram serve` (see lib/engram.mjs): the JavaScript tests here
# (integrations/*.test.mjs, with the npm packages pinned in
# package-lock.json), the Python client's tests (clients/python) and the
# TypeScript client's (clients/typescript).
#
#   integrations/run.sh [node --test arguments]
#
# Needs go, node 20+, npm and python3. Exits non-zero when any test fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

say() { echo "integrations: $*" >&2; }

export ENGRAM_BIN=$here/.bin/engram
say "building $ENGRAM_BIN"
(cd "$root" && go build -o "$ENGRAM_BIN" ./cmd/engram)
export FAKE_OPENAI_BIN=$here/.bin/fakeopenai
(cd "$root" && go build -o "$FAKE_OPENAI_BIN" ./internal/fakeopenai) # the upstream LLM of openai.test.mjs

if [[ ! -d $here/node_modules ]] || [[ $here/package-lock.json -nt $here/node_modules/.package-lock.json ]]; then
	say "installing the pinned npm packages (npm ci)"
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
fi

shopt -s nullglob
tests=("$here"/*.test.mjs)
if ((${#tests[@]})); then
	say "node --test ${#tests[@]} files"
	(cd "$here" && node --test --test-concurrency=1 "$@" "${tests[@]}")
fi

if [[ -f $root/clients/python/run_tests.sh ]]; then
	say "Python client"
	bash "$root/clients/python/run_tests.sh"
fi
if [[ -f $root/clients/typescript/package.json ]]; then
	say "TypeScript client"
	(cd "$root/clients/typescript" && npm ci --no-audit --no-fund --loglevel=error && npm test)
fi
