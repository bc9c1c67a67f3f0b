#!/usr/bin/env bash
# Runs the Python client's tests against a real `engram serve` (the tests
# start it themselves: $ENGRAM_BIN, or a binary they build with go build).
#
#   clients/python/run_tests.sh [unittest arguments]
#
# Needs python3 (3.9 or newer) and, without ENGRAM_BIN, go; runs mypy
# --strict on the package too when mypy is installed. Under CI (CI=true) a
# missing mypy is installed from Debian's packages, so the type check is
# never skipped there.
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
# The package is typed; check it when a type checker is installed (Debian's
# mypy package), say so when not.
if ! command -v mypy >/dev/null 2>&1 && [[ ${CI:-} == true ]] && command -v apt-get >/dev/null 2>&1; then
	sudo=()
	((EUID == 0)) || sudo=(sudo)
	echo "clients/python: installing mypy with apt-get for the type check" >&2
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq mypy >/dev/null
fi
if command -v mypy >/dev/null 2>&1; then
	mypy --strict --python-version 3.9 engram_client
else
	echo "clients/python: mypy is not installed; the type check is skipped" >&2
fi
exec python3 -m unittest discover -s tests -v "$@"
