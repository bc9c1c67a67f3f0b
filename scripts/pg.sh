#!/usr/bin/env bash
# Runs a command next to a throwaway PostgreSQL server:
#
#   scripts/pg.sh go test -race ./postgres/
#
# It finds the PostgreSQL server binaries (installing Debian's postgresql
# package when they are missing and it runs as root), initialises a cluster
# in a new temporary directory, starts it on a free loopback port with its
# socket in that directory, creates the role and database "engram", exports
# ENGRAM_TEST_POSTGRES_URL, runs the command, and finally stops the server by
# its PID and removes the directory. The command's exit status is the
# script's.
#
# initdb refuses to run as root, so as root the cluster belongs to the
# postgres user (which the Debian package creates). The cluster runs with
# fsync off: it is thrown away at exit, and tests should not wait on disks.
#
# Environment: PG_BINDIR picks the directory holding initdb, pg_ctl and
# psql; PG_DURABLE=1 keeps fsync and synchronous commits on (for benchmarks
# that compare with a store that syncs every commit); PG_KEEP=1 leaves the
# directory in place for a post-mortem.
set -euo pipefail

die() {
	echo "pg.sh: $*" >&2
	exit 1
}

[[ $# -gt 0 ]] || {
	echo "usage: scripts/pg.sh COMMAND [ARG...]" >&2
	exit 2
}

# bindir prints the newest /usr/lib/postgresql/N/bin holding initdb, or the
# directory pg_config names.
bindir() {
	local d found=""
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
		if [[ -x $d/initdb ]]; then
			found=$d
		fi
	done
	if [[ -z $found ]] && command -v pg_config >/dev/null 2>&1 && [[ -x $(pg_config --bindir)/initdb ]]; then
		found=$(pg_config --bindir)
	fi
	echo "$found"
}

root=false
[[ $(id -u) -eq 0 ]] && root=true

bin=${PG_BINDIR:-$(bindir)}
if [[ -z $bin ]]; then
	$root || die "PostgreSQL server binaries are missing; install the postgresql package (as root: apt-get install -y postgresql)"
	command -v apt-get >/dev/null 2>&1 || die "PostgreSQL server binaries are missing and this is not a Debian-like system"
	echo "pg.sh: installing PostgreSQL from Debian" >&2
	# The package would create and start a cluster of its own on port 5432;
	# this script needs none.
	mkdir -p /etc/postgresql-common/createcluster.d
	[[ -e /etc/postgresql-common/createcluster.d/engram-no-main.conf ]] ||
		echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.d/engram-no-main.conf
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends postgresql >&2
	bin=$(bindir)
	[[ -n $bin ]] || die "installed postgresql but found no initdb under /usr/lib/postgresql/*/bin"
fi
for tool in initdb pg_ctl psql; do
	[[ -x $bin/$tool ]] || die "$bin/$tool is missing"
done

# as_owner runs a command as the owner of the cluster.
as_owner() {
	if $root; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}
if $root; then
	id postgres >/dev/null 2>&1 || die "running as root but there is no postgres user to own the cluster"
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/engram-pg.XXXXXX")
chmod 700 "$dir"
$root && chown postgres: "$dir"
pid=""

cleanup() {
	local status=$?
	if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid" 2>/dev/null || true # fast shutdown: roll back and exit
		for _ in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "pg.sh: PostgreSQL (PID $pid) did not stop in 10s; killing it" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	if [[ ${PG_KEEP:-} == 1 ]]; then
		echo "pg.sh: kept $dir" >&2
	else
		rm -rf "$dir"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A UTF-8 locale when the system has one, so the text search parser sees
# what a production server would.
locale=C
if locale -a 2>/dev/null | grep -qix 'c.utf-\?8'; then
	locale=C.UTF-8
fi
password=engram
printf '%s\n' "$password" >"$dir/pwfile"
$root && chown postgres: "$dir/pwfile"
# Local (socket) connections are trusted; TCP ones need the password, over
# SCRAM, as a real deployment would.
as_owner "$bin/initdb" -D "$dir/data" -U postgres -E UTF8 --locale="$locale" \
	--auth-local=trust --auth-host=scram-sha-256 --pwfile="$dir/pwfile" --no-sync >"$dir/initdb.log" 2>&1 ||
	die "initdb failed: $(cat "$dir/initdb.log")"

# A port nothing listens on. Another process may take it between the check
# and the start, so the start is retried on another port.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

durability="-c fsync=off -c full_page_writes=off -c synchronous_commit=off"
if [[ ${PG_DURABLE:-} == 1 ]]; then
	durability="-c fsync=on -c full_page_writes=on -c synchronous_commit=on"
fi

started=false
for _ in 1 2 3 4 5; do
	port=$(free_port)
	if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -s \
		-o "-h 127.0.0.1 -p $port -k $dir $durability -c max_connections=300" \
		start; then
		started=true
		break
	fi
done
$started || die "PostgreSQL did not start: $(tail -n 20 "$dir/server.log")"
pid=$(head -n 1 "$dir/data/postmaster.pid")

psql_admin() {
	as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres "$@"
}
psql_admin -c "CREATE ROLE engram LOGIN PASSWORD '$password'" -c "CREATE DATABASE engram OWNER engram" >/dev/null

export ENGRAM_TEST_POSTGRES_URL="postgres://engram:$password@127.0.0.1:$port/engram?sslmode=disable"
# For tests that look at the cluster's files (the residue scan): its data
# directory, and a superuser connection to CHECKPOINT before reading them.
export ENGRAM_TEST_POSTGRES_DATA="$dir/data"
export ENGRAM_TEST_POSTGRES_ADMIN_URL="postgres://postgres:$password@127.0.0.1:$port/engram?sslmode=disable"
echo "pg.sh: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') (PID $pid) at 127.0.0.1:$port" >&2

# Not exec: the trap has to stop the server afterwards.
set +e
"$@"
status=$?
set -e
exit "$status"
