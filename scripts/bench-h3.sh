#!/usr/bin/env bash
# bench-h3.sh: HTTP/3 generator cost on loopback.
#
# Measures `loadlab gen --http3` beside the plain quic-go client a Go user
# would write (scripts/h3plain: http.Client over one http3.Transport per
# connection, one request at a time), loadlab's HTTP/2 over TLS, and
# `h2load --npn-list=h3` when this h2load speaks HTTP/3, against a local
# HTTP/3 server:
#   - keep-alive: requests/s and generator CPU µs per request, CONNS connections
#   - --new-conn: handshakes/s and generator CPU µs per handshake
# Server pinned to SERVER_CPU, each generator in turn to GEN_CPU (taskset;
# loadlab also --cpus GEN_CPU); ROUNDS rounds, the tool order rotating
# every round; medians and per-round ratios.
# CPU is user+sys from /usr/bin/time over the generator's whole process
# (startup, warmup and probe included), divided by every request it made
# (2xx, other statuses and errors). Every tool runs for the same -d.
# Loopback only; every run is bounded; only the PIDs started here are killed.
#
# Tools (TOOLS, default "loadlab-lean loadlab-std h3plain loadlab-h2 loadlab-tcp"):
#   loadlab-ENGINE  loadlab gen --http3 --tls-engine ENGINE (std: quic-go;
#                   lean: the lean QUIC client, gen/quic; auto)
#   h3plain         scripts/h3plain (built into bin/h3plain)
#   loadlab-h2      loadlab gen --h2 over TLS (ALPN h2, the same server's
#                   TCP port), CONNS connections x STREAMS streams (default
#                   1: one request at a time per connection, as HTTP/3 here);
#                   keep-alive only
#   loadlab-tcp     loadlab gen over TLS 1.3 on TCP, HTTP/1.1 (the same
#                   server's TCP port, the lean TLS client): keep-alive
#                   requests, and with --new-conn a TCP+TLS 1.3 handshake each
#   h2load          added by itself when h2load speaks HTTP/3; keep-alive only
#   base-ENGINE     loadlab-ENGINE run by BASE_LOADLAB, another loadlab binary
#                   (e.g. built from main), for a before/after in the same rounds
# Ratios, of the medians and per round (issue 31's targets):
#   keep-alive   loadlab-ENGINE/h3plain <= 0.6, loadlab-ENGINE/loadlab-h2 <= 1.5
#   --new-conn   loadlab-ENGINE/h3plain <= 0.3, loadlab-ENGINE/loadlab-tcp <= 2
#
# Server (SERVER=auto|loadlab|caddy, default auto = the first available):
#   loadlab  `loadlab serve --h3 --h2` (SERVE_LOADLAB, default the loadlab
#            below), when that binary has the serve command; GET /1k = 1024 bytes
#   caddy    Caddy (CADDY, default the repository's .cache/bin/caddy that
#            scripts/install-proxies.sh builds, else caddy on PATH) serving
#            a 1 KiB file (HTTP/2 on its TCP port too)
#   or any HTTP/3 server as H3_SERVER_CMD, a shell command with {port}
#   {cert} {key} {dir} placeholders that serves GET /1k (1024 bytes).
#
# Usage: scripts/bench-h3.sh [-d SECONDS] [-r ROUNDS] [-f SERVER_CPU] [-g GEN_CPU]
#   (environment: SERVER_CPU, GEN_CPU, CONNS=10, STREAMS=1, TOOLS, MODES="keepalive newconn",
#   LOADLAB, BASE_LOADLAB, SERVER, SERVE_LOADLAB, CADDY, H3_SERVER_CMD, PORT, KEEP_TMP)
set -euo pipefail

DUR=5 ROUNDS=3 SCPU=${SERVER_CPU:-0} GCPU=${GEN_CPU:-1} CONNS=${CONNS:-10} STREAMS=${STREAMS:-1} PORT=${PORT:-}
TOOLS=${TOOLS:-loadlab-lean loadlab-std h3plain loadlab-h2 loadlab-tcp}
MODES=${MODES:-keepalive newconn}
while getopts "d:r:f:g:h" o; do
	case $o in
	d) DUR=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	f) SCPU=$OPTARG ;;
	g) GCPU=$OPTARG ;;
	*) sed -n '2,45p' "$0"; exit 2 ;;
	esac
done
case "$DUR$ROUNDS$CONNS$STREAMS$SCPU$GCPU" in *[!0-9]*) echo "bench-h3: -d, -r, -f, -g, CONNS and STREAMS take whole numbers" >&2; exit 2 ;; esac
[ "$DUR" -ge 2 ] && [ "$DUR" -le 60 ] || { echo "bench-h3: -d must be 2-60 seconds" >&2; exit 2; }
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 9 ] || { echo "bench-h3: -r must be 1-9" >&2; exit 2; }
[ "$CONNS" -ge 1 ] && [ "$CONNS" -le 1000 ] && [ "$STREAMS" -ge 1 ] || { echo "bench-h3: CONNS must be 1-1000, STREAMS at least 1" >&2; exit 2; }
[ "$SCPU" != "$GCPU" ] || { echo "bench-h3: the server and the generator need different CPUs" >&2; exit 2; }
for t in $TOOLS; do
	case $t in loadlab-h2 | loadlab-tcp | loadlab-std | loadlab-auto | loadlab-lean | h3plain | h2load) ;;
	base-std | base-auto | base-lean)
		[ -x "${BASE_LOADLAB:-}" ] || { echo "bench-h3: $t needs BASE_LOADLAB, a loadlab binary" >&2; exit 2; } ;;
	*) echo "bench-h3: unknown tool '$t' in TOOLS: use loadlab-std, loadlab-auto, loadlab-lean, base-ENGINE, h3plain, loadlab-h2, loadlab-tcp, h2load" >&2; exit 2 ;;
	esac
done
for m in $MODES; do
	case $m in keepalive | newconn) ;; *) echo "bench-h3: unknown mode '$m' in MODES: use keepalive, newconn" >&2; exit 2 ;; esac
done
for tool in jq taskset timeout /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-h3: needs $tool" >&2; exit 1; }
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
GIVEN_LOADLAB=${LOADLAB:-}
# shellcheck source-path=SCRIPTDIR
source "$ROOT/scripts/lib/bench-common.sh" # for rotate, ratio, verdict and median only
# LOADLAB: a loadlab binary to measure; default this checkout's, rebuilt
# (incrementally) so the numbers are of the code here.
LOADLAB=${GIVEN_LOADLAB:-$ROOT/bin/loadlab}
if [ -z "$GIVEN_LOADLAB" ]; then
	(cd "$ROOT" && go build -o bin/loadlab ./cmd/loadlab)
fi
H3PLAIN=$ROOT/bin/h3plain
case " $TOOLS " in *" h3plain "*) (cd "$ROOT" && go build -o bin/h3plain ./scripts/h3plain) ;; esac
TMP=$(mktemp -d /tmp/bench-h3.XXXXXX)
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	[ -n "${KEEP_TMP:-}" ] && echo "bench-h3: kept $TMP" >&2 || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port free for both TCP and UDP on loopback (other servers may run here).
if [ -z "$PORT" ]; then
	for _ in $(seq 50); do
		p=$((20000 + RANDOM % 20000))
		if [ -z "$(ss -Htuln "sport = :$p")" ]; then PORT=$p; break; fi
	done
	[ -n "$PORT" ] || { echo "bench-h3: found no free port; set PORT" >&2; exit 1; }
fi

"$LOADLAB" certs --out "$TMP/certs" --key p256 >/dev/null
CERT=$TMP/certs/p256/fullchain.pem KEY=$TMP/certs/p256/key.pem CA=$TMP/certs/ca/ca.pem
mkdir -p "$TMP/www"
head -c 1024 /dev/urandom >"$TMP/www/1k"

# Start the server on SERVER_CPU.
SERVE_LOADLAB=${SERVE_LOADLAB:-$LOADLAB}
SERVER=${SERVER:-auto}
if [ -z "${H3_SERVER_CMD:-}" ] && [ "$SERVER" != caddy ]; then
	if "$SERVE_LOADLAB" serve --help 2>/dev/null | grep -- "--h3" >/dev/null; then  # not grep -q: an early exit would SIGPIPE the writer (pipefail)
		H3_SERVER_CMD="$SERVE_LOADLAB serve --h3 --h2 --listen 127.0.0.1:{port} --tls-cert {cert} --tls-key {key}"
	elif [ "$SERVER" = loadlab ]; then
		echo "bench-h3: $SERVE_LOADLAB has no 'serve --h3'; set SERVE_LOADLAB to a build that has" >&2
		exit 1
	fi
fi
if [ -n "${H3_SERVER_CMD:-}" ]; then
	cmd=${H3_SERVER_CMD//\{port\}/$PORT}
	cmd=${cmd//\{cert\}/$CERT}
	cmd=${cmd//\{key\}/$KEY}
	cmd=${cmd//\{dir\}/$TMP/www}
	SERVER_NAME="$cmd"
	taskset -c "$SCPU" bash -c "exec $cmd" >"$TMP/server.log" 2>&1 &
	SERVER_PID=$!
else
	CADDY=${CADDY:-}
	for c in "$ROOT/.cache/bin/caddy" "$(command -v caddy || true)"; do
		[ -z "$CADDY" ] && [ -n "$c" ] && [ -x "$c" ] && CADDY=$c
	done
	if [ -z "$CADDY" ]; then
		echo "bench-h3: no HTTP/3 server: build loadlab with 'serve --h3', install Caddy (CADDY=path) or set H3_SERVER_CMD" >&2
		exit 1
	fi
	cat >"$TMP/Caddyfile" <<EOF
{
	admin off
	auto_https off
	persist_config off
	storage file_system $TMP/caddy-data
	servers {
		protocols h1 h2 h3
	}
}
https://localhost:$PORT {
	bind 127.0.0.1
	tls $CERT $KEY
	root * $TMP/www
	file_server
}
EOF
	SERVER_NAME="Caddy ($("$CADDY" build-info 2>/dev/null | awk '$1=="mod" && $2 ~ /caddyserver\/caddy\/v2$/ {print $3}'))"
	HOME=$TMP XDG_CONFIG_HOME=$TMP XDG_DATA_HOME=$TMP \
		taskset -c "$SCPU" "$CADDY" run --config "$TMP/Caddyfile" --adapter caddyfile >"$TMP/server.log" 2>&1 &
	SERVER_PID=$!
fi
# Ready when our server (not another process) listens on the UDP port.
for i in $(seq 101); do
	kill -0 "$SERVER_PID" 2>/dev/null || { echo "bench-h3: server exited:" >&2; tail -5 "$TMP/server.log" >&2; exit 1; }
	ss -Hulnp "sport = :$PORT" | grep -q "pid=$SERVER_PID," && break
	[ "$i" = 101 ] && { echo "bench-h3: server not listening on UDP $PORT after 10s" >&2; exit 1; }
	sleep 0.1
done
URL=https://127.0.0.1:$PORT/1k
TLSARGS=(--ca "$CA" --sni localhost -H "Host: localhost:$PORT")
sleep 0.5


# h2load: Debian's build may lack HTTP/3 (it needs ngtcp2/nghttp3); try it.
H2LOAD_H3=no
if command -v h2load >/dev/null; then
	if timeout 10 h2load --npn-list=h3 -n 1 -c 1 -H "Host: localhost:$PORT" "$URL" 2>&1 | grep "Application protocol: h3" >/dev/null; then
		H2LOAD_H3=yes
		case " $TOOLS " in *" h2load "*) ;; *) TOOLS="$TOOLS h2load" ;; esac
	fi
fi
LIMIT=$((DUR + 30)) # every run is killed after this many seconds

# per_unit CPU_SECONDS REQUESTS RATE ERRORS: the runners' output line.
per_unit() {
	awk -v r="$3" -v c="$1" -v n="$2" -v e="$4" 'BEGIN {printf "%.1f %s %d\n", r, (n > 0 ? sprintf("%.1f", c * 1e6 / n) : "-"), e}'
}

# timed_gen NAME CMD...: CMD on the generator CPU under /usr/bin/time,
# bounded by LIMIT; stdout and stderr into $TMP/NAME.{out,err}, "user sys"
# into $TMP/NAME.time. Returns CMD's status.
timed_gen() {
	local name=$1
	shift
	timeout -k 5 "$LIMIT" /usr/bin/time -f "%U %S" -o "$TMP/$name.time" \
		taskset -c "$GCPU" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# cpu_of NAME: user+sys seconds of a timed_gen run (its last line: time
# puts "Command exited with non-zero status" first on failure).
cpu_of() { tail -n 1 "$TMP/$1.time" | awk '{print $1 + $2}'; }

# run_tool TOOL MODE: one bounded run; prints "rate cpu_us_per_unit errors"
# ("- - -" when the tool failed or does not apply; why on stderr).
run_tool() {
	local tool=$1 mode=$2 name="$1-$2" rc=0 extra=()
	[ "$mode" = newconn ] && extra=(--new-conn)
	case $tool in
	loadlab-h2)
		[ "$mode" = keepalive ] || { echo "- - -"; return; }
		timed_gen "$name" "$LOADLAB" gen --h2 --streams "$STREAMS" --cpus "$GCPU" -c "$CONNS" -d "${DUR}s" --warmup 1s \
			--timeout 5s -q --json "$TMP/$name.json" "${TLSARGS[@]}" "$URL" || rc=$?
		;;
	loadlab-tcp)
		timed_gen "$name" "$LOADLAB" gen --cpus "$GCPU" -c "$CONNS" -d "${DUR}s" --warmup 1s \
			--timeout 5s -q --json "$TMP/$name.json" "${TLSARGS[@]}" "${extra[@]}" "$URL" || rc=$?
		;;
	loadlab-* | base-*)
		local bin=$LOADLAB
		[ "${tool%%-*}" = base ] && bin=$BASE_LOADLAB
		timed_gen "$name" "$bin" gen --http3 --tls-engine "${tool#*-}" --cpus "$GCPU" -c "$CONNS" -d "${DUR}s" --warmup 1s \
			--timeout 5s -q --json "$TMP/$name.json" "${TLSARGS[@]}" "${extra[@]}" "$URL" || rc=$?
		;;
	h3plain)
		timed_gen "$name" "$H3PLAIN" -c "$CONNS" -d "${DUR}s" --timeout 5s --ca "$CA" --sni localhost --host "localhost:$PORT" \
			"${extra[@]}" "$URL" || rc=$?
		;;
	h2load)
		[ "$mode" = keepalive ] || { echo "- - -"; return; }
		timed_gen "$name" h2load --npn-list=h3 -c "$CONNS" -D "$DUR" --warm-up-time=1 \
			-H "Host: localhost:$PORT" "$URL" || rc=$?
		;;
	esac
	if [ "$rc" != 0 ]; then
		echo "  ($tool $mode failed, exit $rc: $(tail -n 2 "$TMP/$name.err" | tr '\n' ' '))" >&2
		echo "- - -"
		return
	fi
	local cpu all rate errs
	cpu=$(cpu_of "$name")
	case $tool in
	loadlab-* | base-*)
		# Every request of the process (warmup included) against its whole CPU time.
		all=$(jq '[.per_second[] | .ok + .non2xx + .errors] | add' "$TMP/$name.json")
		if [ "$mode" = newconn ]; then rate=$(jq .handshake_rate "$TMP/$name.json"); else rate=$(jq .achieved_rate "$TMP/$name.json"); fi
		errs=$(jq '[.errors[]] | add // 0' "$TMP/$name.json")
		[ "$errs" = 0 ] || echo "  ($tool $mode: $errs errors: $(jq -c .error_samples "$TMP/$name.json"))" >&2
		;;
	h3plain)
		all=$(jq .requests "$TMP/$name.out")
		rate=$(jq '.requests / .elapsed_s' "$TMP/$name.out")
		errs=$(jq .errors "$TMP/$name.out")
		[ "$errs" = 0 ] || echo "  (h3plain $mode: $errs errors: $(head -n 3 "$TMP/$name.err" | tr '\n' ' '))" >&2
		;;
	h2load)
		rate=$(awk '/^finished in/ {gsub(",", "", $4); print $4}' "$TMP/$name.out")
		all=$(awk '/^requests:/ {print $8}' "$TMP/$name.out")
		errs=$(awk '/^requests:/ {print $10}' "$TMP/$name.out")
		;;
	esac
	per_unit "$cpu" "${all:-0}" "${rate:-0}" "${errs:-0}"
}

# The loadlab HTTP/3 rows, judged against h3plain and loadlab-h2
# (keep-alive) or loadlab-tcp (--new-conn).
H3ROWS=()
for t in $TOOLS; do
	case $t in loadlab-h2 | loadlab-tcp) ;; loadlab-* | base-*) H3ROWS+=("$t") ;; esac
done
has_tool() { case " $TOOLS " in *" $1 "*) return 0 ;; esac; return 1; }
# bases MODE: the tools an HTTP/3 row is compared with; target MODE BASE.
bases() { if [ "$1" = newconn ]; then echo h3plain loadlab-tcp; else echo h3plain loadlab-h2; fi; }
target() {
	case $1.$2 in
	keepalive.h3plain) echo 0.6 ;; keepalive.loadlab-h2) echo 1.5 ;;
	newconn.h3plain) echo 0.3 ;; newconn.loadlab-tcp) echo 2 ;; *) echo - ;;
	esac
}

echo "bench-h3: server $SERVER_NAME on CPU $SCPU, generator on CPU $GCPU, $CONNS connections (loadlab-h2: x $STREAMS streams), ${DUR}s runs (loadlab: 1s warmup), $ROUNDS rounds, tool order rotating, medians"
echo "bench-h3: loopback $URL (1 KiB body); tools: $TOOLS; loadlab $(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')$(cd "$ROOT" && git diff --quiet HEAD 2>/dev/null || echo '+dirty')"
if [ "$H2LOAD_H3" = yes ]; then
	echo "bench-h3: h2load $(h2load --version | awk '{print $2}') speaks HTTP/3: compared below"
else
	echo "bench-h3: h2load $(command -v h2load >/dev/null && h2load --version | awk '{print $2}') has no HTTP/3 (Debian builds it without ngtcp2/nghttp3): not compared"
fi
echo "bench-h3: CPU = user+sys of /usr/bin/time over the whole process / every request it made; $(sysctl -n net.core.rmem_max 2>/dev/null | awk '{printf "net.core.rmem_max %d KiB", $1/1024}'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A RATES CPUS RR # RATES[tool.mode], CPUS[tool.mode]: one value per round; RR[row.mode.base]: per-round ratios
for mode in $MODES; do
	unit=request
	[ "$mode" = newconn ] && unit=handshake
	for r in $(seq "$ROUNDS"); do
		declare -A cost=()
		# shellcheck disable=SC2086 # TOOLS is a word list
		while read -r tool; do
			[ "$mode" = newconn ] && case $tool in loadlab-h2 | h2load) continue ;; esac
			rate=- cpu=- errs=-
			read -r rate cpu errs < <(run_tool "$tool" "$mode") || true
			echo "  round $r: $tool $mode: $rate/s, $cpu CPU µs per $unit$([ "$errs" != 0 ] && [ "$errs" != - ] && echo ", $errs errors")"
			RATES[$tool.$mode]+="$rate " CPUS[$tool.$mode]+="$cpu "
			cost[$tool]=$cpu
		done < <(rotate "$r" $TOOLS)
		line=""
		for row in "${H3ROWS[@]}"; do
			for base in $(bases "$mode"); do
				has_tool "$base" || continue
				rr=$(ratio "${cost[$row]:--}" "${cost[$base]:--}")
				RR[$row.$mode.$base]+="$rr "
				line+="  $row/$base $rr"
			done
		done
		[ -n "$line" ] && echo "  round $r: $mode ratios:$line"
		unset cost
	done
done

med() { tr ' ' '\n' <<<"${1:-}" | median; }
echo
printf "%-12s %-22s %13s %14s  %s\n" tool test "median rate/s" "median CPU µs" "ratios of the medians (median of the per-round ratios), target, verdict"
for mode in $MODES; do
	test="keep-alive requests" unit=request
	[ "$mode" = newconn ] && test="--new-conn handshakes" unit=handshake
	for tool in $TOOLS; do
		[ "$mode" = newconn ] && case $tool in loadlab-h2 | h2load) continue ;; esac
		mrate=$(med "${RATES[$tool.$mode]:-}") mcpu=$(med "${CPUS[$tool.$mode]:-}")
		note=""
		case " ${H3ROWS[*]} " in
		*" $tool "*)
			for base in $(bases "$mode"); do
				has_tool "$base" || continue
				tgt=$(target "$mode" "$base")
				rat=$(ratio "$mcpu" "$(med "${CPUS[$base.$mode]:-}")")
				note+="  /$base $rat ($(med "${RR[$tool.$mode.$base]:-}"))"
				[ "$tgt" != - ] && note+=" <= $tgt $(verdict "$rat" "$tgt")"
			done
			;;
		esac
		printf "%-12s %-22s %13s %14s %s\n" "$tool" "$test" "$mrate" "$mcpu/$unit" "$note"
	done
done
echo
echo "ratio = median loadlab HTTP/3 CPU per unit / the other tool's (lower is better for loadlab); targets: keep-alive /h3plain <= 0.6, /loadlab-h2 <= 1.5; --new-conn /h3plain <= 0.3, /loadlab-tcp <= 2"
