#!/usr/bin/env bash
# Runs the Python client's tests against a real `engram serve` (the tests
# start it themselves: $ENGRAM_BIN, or a binary they build with go build).
#
#   clients/python/run_tests.sh [unittest arguments]
#
# Needs python3 (3.9 or newer) and, without ENGRAM_BIN, go.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v python3 >/dev/null 2>&1; then
	echo "clients/python: python3 is not installed; the Python client's tests need Python 3.9 or newer" >&2
	exit 1
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
	echo "clients/python: $(python3 --version 2>&1) is too old; the Python client needs 3.9 or newer" >&2
	exit 1
fi
exec python3 -m unittest discover -s tests -v "$@"
