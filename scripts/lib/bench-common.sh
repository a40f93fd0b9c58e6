# shellcheck shell=bash
# Shared helpers for scripts/bench-*.sh: tool installation, a throwaway
# nginx pinned to SERVER_CPU, timed generator runs pinned to GEN_CPU, and
# medians. Source it from a script running under `set -euo pipefail`.
#
# Environment (all optional):
#   SERVER_CPU=0   CPU for nginx (master and its one worker)
#   GEN_CPU=1      CPU for the generator under test (one at a time)
#   DURATION=10    seconds per generator run
#   ROUNDS=3       rounds; the tool order rotates every round
#   CONNS=50       connections per generator
#   LOADLAB_ENV=   extra environment for loadlab only, NAME=VALUE words
#                  (for experiments, e.g. LOADLAB_ENV=GOMAXPROCS=2)
#   TAG=           suffix for the result files (results/bench-NAME-TAG.tsv ...)

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
CONNS=${CONNS:-50}
LOADLAB=$ROOT/bin/loadlab
LOADLAB_ENV=${LOADLAB_ENV:-}
GOTOOLS=$ROOT/.cache/bin
RESULTS=$ROOT/results

TMP=""
NGINX_PID=""
GEN_PID=""

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
log() { echo "$*" >&2; }

# cleanup stops only what this script started (by PID) and removes its temp dir.
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $GEN_PID ]] && kill -0 "$GEN_PID" 2>/dev/null; then
		kill -TERM "$GEN_PID" 2>/dev/null || true
		wait "$GEN_PID" 2>/dev/null || true
	fi
	stop_nginx
	if [[ -n $TMP && -d $TMP ]]; then rm -rf "$TMP"; fi
	exit "$rc"
}

# bench_init checks the environment and sets up the temp dir and traps.
bench_init() {
	local v
	for v in SERVER_CPU GEN_CPU DURATION ROUNDS CONNS; do
		[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a non-negative integer (got '${!v}')"
	done
	((DURATION >= 1)) || die "DURATION must be at least 1 (seconds)"
	((ROUNDS >= 1)) || die "ROUNDS must be at least 1"
	((CONNS >= 1)) || die "CONNS must be at least 1"
	local w
	LOADLAB_RUN=("$LOADLAB") # the words that start loadlab
	if [[ -n $LOADLAB_ENV ]]; then
		LOADLAB_RUN=(env)
		for w in $LOADLAB_ENV; do
			[[ $w =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]] || die "LOADLAB_ENV must be NAME=VALUE words (got '$w')"
			LOADLAB_RUN+=("$w")
		done
		LOADLAB_RUN+=("$LOADLAB")
	fi
	# BEFORE=PATH: a second loadlab binary (another commit's), run as its
	# own tool rows (before-loadlab-...) beside this checkout's, alternated
	# with them in every round.
	BEFORE_RUN=()
	if [[ -n ${BEFORE:-} ]]; then
		[[ -x $BEFORE && -f $BEFORE ]] || die "BEFORE must name an executable loadlab binary (got '$BEFORE')"
		BEFORE_RUN=("${LOADLAB_RUN[@]:0:${#LOADLAB_RUN[@]}-1}" "$BEFORE")
	fi
	[[ $SERVER_CPU != "$GEN_CPU" ]] || die "SERVER_CPU and GEN_CPU must differ (both $GEN_CPU)"
	local allowed
	allowed=$(taskset -pc $$ | sed 's/.*: //')
	cpu_in_list "$SERVER_CPU" "$allowed" || die "SERVER_CPU=$SERVER_CPU is not in this shell's CPU list ($allowed)"
	cpu_in_list "$GEN_CPU" "$allowed" || die "GEN_CPU=$GEN_CPU is not in this shell's CPU list ($allowed)"
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	TMP=$(mktemp -d /tmp/loadlab-bench.XXXXXX)
	chmod 755 "$TMP" # nginx workers run as nobody and must read the files
	mkdir -p "$RESULTS" "$TMP/logs"
}

# cpu_in_list CPU LIST: is CPU in a list like "0-3,6"?
cpu_in_list() {
	local cpu=$1 part lo hi
	local IFS=,
	for part in $2; do
		lo=${part%-*} hi=${part#*-}
		if ((cpu >= lo && cpu <= hi)); then return 0; fi
	done
	return 1
}

# need_apt BIN:PACKAGE ...: apt-get install the packages whose binary is missing.
need_apt() {
	local pair pkgs=()
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || pkgs+=("${pair#*:}")
	done
	((${#pkgs[@]} == 0)) && return 0
	log "installing ${pkgs[*]} with apt-get"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q "${pkgs[@]}" >/dev/null ||
		{ apt-get update -q >/dev/null && apt-get install -y -q "${pkgs[@]}" >/dev/null; } ||
		die "apt-get install ${pkgs[*]} failed: install them by hand and rerun"
}

# need_go NAME MODULE@VERSION: go install a tool into .cache/bin unless present.
need_go() {
	local name=$1 mod=$2
	[[ -x $GOTOOLS/$name ]] && return 0
	log "installing $mod into $GOTOOLS"
	mkdir -p "$GOTOOLS"
	GOBIN=$GOTOOLS go install "$mod" || die "go install $mod failed: check network access to the Go module proxy"
}

# loadlab_words TOOL sets LL to the words that start the loadlab of TOOL
# (before-loadlab-...: BEFORE's; loadlab-...: this checkout's) and LTOOL to
# TOOL without its before- prefix.
loadlab_words() {
	LTOOL=${1#before-}
	if [[ $1 == before-* ]]; then LL=("${BEFORE_RUN[@]}"); else LL=("${LOADLAB_RUN[@]}"); fi
}

# with_before LIST prints LIST with, when BEFORE is set, a before-T after
# every loadlab tool T.
with_before() {
	local t out=""
	for t in $1; do
		out+="$t "
		[[ -n ${BEFORE:-} && $t == loadlab-* ]] && out+="before-$t "
	done
	echo "$out"
}

# build_loadlab builds bin/loadlab from this checkout.
build_loadlab() {
	log "building bin/loadlab"
	(cd "$ROOT" && go build -o bin/loadlab ./cmd/loadlab) || die "go build ./cmd/loadlab failed: fix the build first"
}

# build_floor builds scripts/floor (the kernel's floor, bench-gen.sh and
# bench-h2.sh) into bin/floor.
build_floor() {
	log "building bin/floor"
	(cd "$ROOT" && go build -o bin/floor ./scripts/floor) || die "go build ./scripts/floor failed"
}

# parse_floor FILE: bin/floor's "ok N errors E bytes B seconds S" as "ok errors rate bytes".
parse_floor() {
	awk '$1 == "ok" { printf "%d %d %.1f %.0f\n", $2, $4, ($8 > 0 ? $2 / $8 : 0), $6; f = 1 } END { exit !f }' "$1"
}

# free_port prints a loopback TCP port with nothing listening on it.
free_port() {
	local p i
	for ((i = 0; i < 200; i++)); do
		p=$((20000 + RANDOM % 12000))
		if [[ -z $(ss -Htan "( sport = :$p )" 2>/dev/null) ]]; then
			echo "$p"
			return 0
		fi
	done
	die "no free TCP port found in 20000-31999"
}

# start_nginx CONF PORT: run nginx in the foreground-mode background, pinned
# to SERVER_CPU, and wait until PORT accepts connections.
start_nginx() {
	local conf=$1 port=$2 i
	nginx -t -q -p "$TMP" -c "$conf" -g 'daemon off;' 2>"$TMP/nginx-test.err" ||
		die "nginx rejected $conf: $(tr '\n' ' ' <"$TMP/nginx-test.err")"
	taskset -c "$SERVER_CPU" nginx -p "$TMP" -c "$conf" -g 'daemon off;' 2>>"$TMP/nginx.err" &
	NGINX_PID=$!
	for ((i = 0; i < 100; i++)); do
		kill -0 "$NGINX_PID" 2>/dev/null || die "nginx exited at start: $(tr '\n' ' ' <"$TMP/nginx.err")"
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	die "nginx did not listen on 127.0.0.1:$port within 10 s"
}

# stop_nginx stops the nginx this script started, if any.
stop_nginx() {
	[[ -z $NGINX_PID ]] && return 0
	if kill -0 "$NGINX_PID" 2>/dev/null; then
		kill -TERM "$NGINX_PID" 2>/dev/null || true
		local i
		for ((i = 0; i < 50; i++)); do
			kill -0 "$NGINX_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$NGINX_PID" 2>/dev/null && kill -KILL "$NGINX_PID" 2>/dev/null
	fi
	wait "$NGINX_PID" 2>/dev/null || true
	NGINX_PID=""
}

# check_url URL SIZE [CURLFLAGS...]: one request must give 200 and SIZE body bytes.
check_url() {
	local url=$1 size=$2 got
	shift 2
	got=$(curl -s "$@" -o /dev/null -w '%{http_code} %{size_download}' --max-time 10 "$url") || true
	[[ $got == "200 $size" ]] || die "$url answered '$got', want '200 $size': see $TMP/error.log"
}

# nginx_conf_head prints the common top of an nginx.conf for $TMP.
nginx_conf_head() {
	cat <<EOF
worker_processes 1;
pid $TMP/nginx.pid;
error_log $TMP/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 100000000;
  default_type application/octet-stream;
EOF
}

# CPU time of a run: `perf stat -e task-clock,user_time,system_time` when
# perf works here (PERF=0 turns it off), else /usr/bin/time's user and sys.
# This VM exposes no hardware counters, so there is no instructions count:
# task-clock and its user/kernel split are the figures (cpu_source says
# which one a run used).
PERF=${PERF:-1}
if ((PERF)) && ! perf stat -x, -e task-clock,user_time,system_time -o /dev/null true 2>/dev/null; then PERF=0; fi

# cpu_source prints how the scripts measure CPU time.
cpu_source() {
	if ((PERF)); then echo "perf stat -e task-clock,user_time,system_time (software counters: this VM has no hardware counters)"; else echo "/usr/bin/time user+sys (perf unavailable)"; fi
}

# timed LIMIT NAME CMD...: run CMD pinned to GEN_CPU under /usr/bin/time
# (and perf stat, see PERF), killed after LIMIT seconds. stdout ->
# $TMP/NAME.out, stderr -> NAME.err, "wall user sys" -> NAME.time, perf's
# counts -> NAME.perf. Returns CMD's status (124 on timeout).
timed() {
	local limit=$1 name=$2 rc=0
	shift 2
	local pre=()
	((PERF)) && pre=(perf stat -x, -e task-clock,user_time,system_time -o "$TMP/$name.perf" --)
	timeout -k 5 "$limit" /usr/bin/time -f '%e %U %S' -o "$TMP/$name.time" \
		"${pre[@]}" taskset -c "$GEN_CPU" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	GEN_PID=$!
	wait "$GEN_PID" || rc=$?
	GEN_PID=""
	return "$rc"
}

# time_fields NAME: prints "wall user sys" of a timed run: wall from
# /usr/bin/time (its last line: it puts "Command exited with non-zero
# status" first on failure), user and sys from perf's user_time and
# system_time when perf ran, else from /usr/bin/time.
time_fields() {
	local wall user sys
	read -r wall user sys < <(tail -n 1 "$TMP/$1.time")
	if [[ -s $TMP/$1.perf ]]; then
		read -r user sys < <(awk -F, '$3 == "user_time" { u = $1 } $3 == "system_time" { s = $1 }
			END { printf "%.3f %.3f\n", (u ~ /^[0-9]/ ? u / 1e9 : 0), (s ~ /^[0-9]/ ? s / 1e9 : 0) }' "$TMP/$1.perf")
	fi
	echo "$wall $user $sys"
}

# task_clock NAME prints perf's task-clock of a timed run in seconds ("-" without perf).
task_clock() {
	[[ -s $TMP/$1.perf ]] || { echo -; return; }
	awk -F, '$3 == "task-clock" && $1 ~ /^[0-9]/ { printf "%.3f\n", $1 / 1000; f = 1 } END { if (!f) print "-" }' "$TMP/$1.perf"
}

# load1 prints the 1-minute load average.
load1() { cut -d' ' -f1 /proc/loadavg; }

# rotate N ROUND ITEM...: prints ITEMs rotated left by (ROUND-1) mod count.
rotate() {
	local round=$1
	shift
	local n=$# i items=("$@")
	for ((i = 0; i < n; i++)); do
		echo "${items[(i + round - 1) % n]}"
	done
}

# median reads numbers (one per line; "-" and empty lines skipped) and prints
# their median, or "-" when there are none.
median() {
	awk '$1 ~ /^[0-9.eE+-]+$/ && $1 != "-" { print $1 }' | sort -g |
		awk '{v[NR] = $1} END { if (NR == 0) { print "-"; exit }
			if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B prints A/B with 2 decimals, or "-" if either is missing or B is 0.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f\n", a / b }'
}

# verdict RATIO TARGET prints ok / MISS (by how much) / n/a.
verdict() {
	awk -v r="$1" -v t="$2" 'BEGIN { if (r == "-") print "n/a"; else if (r + 0 <= t + 0) print "ok";
		else printf "MISS (%.0f%% over)\n", (r / t - 1) * 100 }'
}

# parse_h2load FILE prints "ok failed rate bytes" of an h2load run: "finished in 10.00s, ..." and "requests: N total, N started, N done, N succeeded, N failed, ...".
parse_h2load() {
	awk '
	function dur(s) { if (s ~ /ms$/) return s / 1000; if (s ~ /us$/) return s / 1e6; if (s ~ /m$/ && s !~ /s$/) return s * 60; return s + 0 }
	/^finished in / { d = $3; sub(/,$/, "", d); secs = dur(d) }
	/^requests: / { ok = $8; failed = $10 }
	/^traffic: / { b = $3; gsub(/[()]/, "", b) }
	END { if (ok == "") exit 1; printf "%d %d %.1f %.0f\n", ok, failed, (secs > 0 ? ok / secs : 0), b }' "$1"
}

# machine_header prints what the numbers depend on.
machine_header() {
	echo "# $(date -u +%FT%TZ)  $(uname -r)  $(nproc) CPUs  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# nginx on CPU $SERVER_CPU, generators on CPU $GEN_CPU, ${DURATION}s x $ROUNDS rounds, $CONNS connections"
	echo "# CPU time: $(cpu_source)"
	echo "# loadlab $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD 2>/dev/null || echo '+dirty')${LOADLAB_ENV:+ with $LOADLAB_ENV}"
}
