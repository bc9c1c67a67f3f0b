#!/usr/bin/env bash
# Runs one fuzz target for a time: scripts/fuzz.sh GO TARGET PACKAGE FUZZTIME
#
# The go tool can end a time-boxed fuzz run with "context deadline
# exceeded" when the time runs out while a worker is mid-input; it writes
# no failing input then, so it found nothing. Such a run is repeated once.
# Any other failure, or one that wrote an input to testdata/fuzz, fails.
set -uo pipefail
go=$1 target=$2 pkg=$3 fuzztime=$4
for attempt in 1 2; do
	out=$("$go" test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[[ $rc -eq 0 ]] && exit 0
	if [[ $attempt -eq 1 && $out == *"context deadline exceeded"* && $out != *"Failing input written"* ]]; then
		echo "fuzz.sh: $target stopped on the go tool's deadline without an input; once more"
		continue
	fi
	exit $rc
done
