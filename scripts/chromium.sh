#!/usr/bin/env bash
# chromium.sh: make sure Debian's chromium is installed (the dashboard's
# browser test drives it headless), installing it with apt-get as root or
# with sudo when missing. Exits non-zero, saying why, when it cannot.
set -euo pipefail

die() { echo "chromium.sh: $*" >&2; exit 1; }

for c in chromium chromium-browser; do
	command -v "$c" >/dev/null 2>&1 && exit 0
done
command -v apt-get >/dev/null 2>&1 || die "chromium is missing and this is not a Debian-like system; install chromium or run the tests without ENGRAM_REQUIRE_CHROMIUM=1"
if [[ $(id -u) -eq 0 ]]; then
	as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	as_root=(sudo -n)
else
	die "chromium is missing; install it as root: apt-get install -y chromium"
fi
echo "chromium.sh: installing chromium with apt-get" >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >&2
