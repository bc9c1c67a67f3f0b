#!/usr/bin/env bash
# Side-by-side benchmark of engram and Mem0's open-source TypeScript
# implementation (mem0ai, pinned in package-lock.json) on LoCoMo: same
# data, same embedder (engram's USE-lite, served to Mem0 over engram's
# OpenAI-compatible /v1/embeddings), one machine, one run.
#
#   bench/mem0/run.sh [--smoke] [--out DIR] [--data FILE]
#
# --smoke runs two conversations and a small padded namespace, for CI.
# Writes DIR/report.md and DIR/report.json (default bench/out/mem0, or
# bench/out/mem0-smoke). Exits non-zero when anything fails, including an
# outbound connection attempt by Mem0 (see guard.cjs).
#
# Needs go, node 20+ and npm; installs python3, make and g++ with apt-get
# when missing (better-sqlite3, which mem0ai needs, compiles from source).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() {
	echo "bench/mem0: $*" >&2
	exit 1
}
say() { echo "bench/mem0: $*" >&2; }

smoke=0
out=""
data=""
while (($#)); do
	case $1 in
	--smoke) smoke=1 ;;
	--out)
		(($# >= 2)) || die "--out needs a directory"
		out=$2
		shift
		;;
	--data)
		(($# >= 2)) || die "--data needs a file"
		data=$2
		shift
		;;
	-h | --help)
		sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown argument $1 (usage: run.sh [--smoke] [--out DIR] [--data FILE])" ;;
	esac
	shift
done
if [[ -z $out ]]; then
	out=$root/bench/out/mem0
	((smoke)) && out=$root/bench/out/mem0-smoke
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The dataset is never part of the repository: $ENGRAM_SHARED/datasets, else
# the "shared" folder next to the repository, as engram eval's tests look.
if [[ -z $data ]]; then
	if [[ -n ${ENGRAM_SHARED:-} ]]; then
		data=$ENGRAM_SHARED/datasets/locomo/locomo10.json
	else
		data=$root/../shared/datasets/locomo/locomo10.json
	fi
fi
if [[ ! -f $data ]]; then
	# The smoke runs inside `make test`, which skips what needs the data
	# sets when they are absent, as the Go tests do; a full run needs them.
	((smoke)) && {
		say "SKIP: LoCoMo data not found at $data (set ENGRAM_SHARED or pass --data)"
		exit 0
	}
	die "LoCoMo data not found at $data (set ENGRAM_SHARED or pass --data)"
fi

for tool in go node npm; do
	command -v "$tool" >/dev/null || die "$tool is required but not installed"
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
((node_major >= 20)) || die "node 20 or later is required, found $(node --version)"

# better-sqlite3 builds with node-gyp: python3, make and a C++ compiler.
missing=()
command -v python3 >/dev/null || missing+=(python3)
command -v make >/dev/null || missing+=(make)
command -v g++ >/dev/null || missing+=(g++)
if ((${#missing[@]})); then
	command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
	sudo=()
	((EUID == 0)) || sudo=(sudo)
	say "installing ${missing[*]} with apt-get"
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# mem0ai and its dependencies, exactly as locked. The stamp skips the
# reinstall (and the native compile) when the lock has not changed.
lock_sum=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
stamp=$here/node_modules/.bench-lock-sha256
if [[ ! -f $stamp || $(cat "$stamp") != "$lock_sum" || ! -f $here/node_modules/better-sqlite3/build/Release/better_sqlite3.node ]]; then
	say "installing mem0ai with npm ci (better-sqlite3 compiles from source, about two minutes)"
	# No prebuilt binary download: compile against the local node headers.
	export npm_config_build_from_source=true
	node_prefix=$(cd "$(dirname "$(readlink -f "$(command -v node)")")/.." && pwd)
	if [[ -f $node_prefix/include/node/node.h ]]; then
		export npm_config_nodedir=$node_prefix
	fi
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci failed"
	echo "$lock_sum" >"$stamp"
fi

bash "$root/scripts/fetch-model.sh" >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/engram-bench-mem0.XXXXXX")
# The stores go to a RAM-backed directory when there is one, for both
# systems alike: each SQLite commit's fsync would otherwise dominate what
# is measured on a slow virtual disk.
storage="disk (${TMPDIR:-/tmp})"
stores=$work/stores
if [[ -d /dev/shm && -w /dev/shm ]] && (($(df -Pk /dev/shm | awk 'NR==2{print $4}') > 4 * 1024 * 1024)); then
	stores=$(mktemp -d /dev/shm/engram-bench-mem0.XXXXXX)
	storage="tmpfs (/dev/shm) for every store of both systems"
fi
mkdir -p "$stores"

pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${pids[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$work" "$stores"
}
trap cleanup EXIT

say "building engram"
(cd "$root" && go build -o "$work/engram" ./cmd/engram) || die "go build failed"

# start NAME: serve a fresh data directory on a free loopback port with the
# default embedder, no API keys (--no-auth, which loopback allows) and no
# request limits (a benchmark's loopback traffic is the point); sets url to
# its base URL once /readyz answers. It runs
# in this shell (not in $(...)) so the PID reaches the cleanup trap.
url=""
start() {
	local name=$1 log=$work/$1.log i
	url=""
	# Created here: the background job opens it only once it is scheduled.
	: >"$log"
	"$work/engram" serve --addr 127.0.0.1:0 --data "$stores/$name" --no-auth --rate-limit 0 --max-concurrent 0 >"$log" 2>&1 &
	pids+=($!)
	for ((i = 0; i < 300; i++)); do
		url=$(sed -n 's/.*listening on \(http:\/\/127\.0\.0\.1:[0-9]*\).*/\1/p' "$log" | head -n1)
		[[ -n $url ]] && break
		kill -0 "${pids[-1]}" 2>/dev/null || {
			cat "$log" >&2
			die "engram ($name) exited"
		}
		sleep 0.1
	done
	[[ -n $url ]] || die "engram ($name) did not start; log: $(cat "$log")"
	node -e '
		const u = process.argv[1] + "/readyz";
		(async () => {
			for (let i = 0; i < 300; i++) {
				try { if ((await fetch(u)).ok) return; } catch {}
				await new Promise((r) => setTimeout(r, 100));
			}
			console.error("not ready: " + u); process.exit(1);
		})();' "$url" || die "engram ($name) not ready; log: $(cat "$log")"
}

# The engram under test; another one that only serves embeddings to Mem0,
# so neither system warms the other's embedding cache; a third, fresh one
# for the one-turn-per-request add latency probe.
start engram
engram_url=$url
start embed
embed_url=$url
start probe
probe_url=$url
say "engram at $engram_url, Mem0's embedder at $embed_url"

commit=unknown
if command -v git >/dev/null && git -C "$root" rev-parse --verify -q HEAD >/dev/null 2>&1; then
	commit=$(git -C "$root" rev-parse --short=12 HEAD)
	[[ -z $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]] || commit="$commit (with uncommitted changes)"
fi

if ((smoke)); then
	args=(--smoke --conversations 2 --scale-namespaces 1 --scale-questions 40 --probe-turns 50)
	cmd="bench/mem0/run.sh --smoke"
else
	args=(--conversations 0 --scale-namespaces 10 --scale-questions 300 --probe-turns 300)
	cmd="bench/mem0/run.sh"
fi

export BENCH_COMMAND="$cmd"
export BENCH_ENGRAM_COMMIT="$commit"
export BENCH_GO_VERSION="$(go env GOVERSION)"
export BENCH_NPROC="$(nproc)"
export BENCH_STORAGE="$storage"

say "running the driver ($cmd)"
status=0
(cd "$here" && node --require ./guard.cjs driver.cjs \
	--engram "$engram_url" --embed "$embed_url" --probe "$probe_url" \
	--data "$data" --out "$out" --tmp "$stores/mem0" "${args[@]}") || status=$?

for name in engram embed probe; do
	if grep -q 'level=ERROR' "$work/$name.log"; then
		say "engram ($name) logged errors:"
		grep 'level=ERROR' "$work/$name.log" | head -n 20 >&2
		status=1
	fi
done
((status == 0)) || die "benchmark failed (status $status); partial report, if any, in $out"
cat "$out/report.md"
say "report in $out/report.md and $out/report.json"
