#!/usr/bin/env bash
# bench-h3.sh: HTTP/3 generator cost on loopback.
#
# Measures `loadlab gen --http3` (and `h2load --npn-list=h3` when this
# h2load speaks HTTP/3) against a local HTTP/3 server:
#   - keep-alive: requests/s and generator CPU µs per request, 10 connections
#   - --new-conn: handshakes/s and generator CPU µs per handshake
# Server pinned to CPU 0, generator to CPU 1 (taskset); ROUNDS rounds, medians.
# CPU is user+sys from /usr/bin/time over the generator's whole process
# (startup, warmup and probe included), divided by every request it made.
# Loopback only; every run is bounded; only the PIDs started here are killed.
#
# Server (SERVER=auto|loadlab|caddy, default auto = the first available):
#   loadlab  `loadlab serve --h3` (SERVE_LOADLAB, default the loadlab below),
#            when that binary has the serve command; GET /1k = 1024 bytes
#   caddy    Caddy (CADDY, default the repository's .cache/bin/caddy that
#            scripts/install-proxies.sh builds, else caddy on PATH) serving
#            a 1 KiB file
#   or any HTTP/3 server as H3_SERVER_CMD, a shell command with {port}
#   {cert} {key} {dir} placeholders that serves GET /1k (1024 bytes).
#
# Usage: scripts/bench-h3.sh [-d SECONDS] [-r ROUNDS] [-f SERVER_CPU] [-g GEN_CPU]
set -euo pipefail

DUR=5 ROUNDS=3 SCPU=0 GCPU=1 CONNS=10 PORT=${PORT:-}
while getopts "d:r:f:g:h" o; do
	case $o in
	d) DUR=$OPTARG ;;
	r) ROUNDS=$OPTARG ;;
	f) SCPU=$OPTARG ;;
	g) GCPU=$OPTARG ;;
	*) sed -n '2,22p' "$0"; exit 2 ;;
	esac
done
case "$DUR$ROUNDS" in *[!0-9]*) echo "bench-h3: -d and -r take whole numbers" >&2; exit 2 ;; esac
[ "$DUR" -ge 2 ] && [ "$DUR" -le 60 ] || { echo "bench-h3: -d must be 2-60 seconds" >&2; exit 2; }
[ "$ROUNDS" -ge 1 ] && [ "$ROUNDS" -le 9 ] || { echo "bench-h3: -r must be 1-9" >&2; exit 2; }
for tool in jq taskset /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench-h3: needs $tool" >&2; exit 1; }
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOADLAB=${LOADLAB:-$ROOT/bin/loadlab}
if [ ! -x "$LOADLAB" ]; then
	(cd "$ROOT" && go build -o bin/loadlab ./cmd/loadlab)
fi

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

# Start the server on CPU 0.
SERVE_LOADLAB=${SERVE_LOADLAB:-$LOADLAB}
SERVER=${SERVER:-auto}
if [ -z "${H3_SERVER_CMD:-}" ] && [ "$SERVER" != caddy ]; then
	if "$SERVE_LOADLAB" serve --help 2>/dev/null | grep -q -- "--h3"; then
		H3_SERVER_CMD="$SERVE_LOADLAB serve --h3 --listen 127.0.0.1:{port} --tls-cert {cert} --tls-key {key}"
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

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.1f\n", (a[NR/2]+a[NR/2+1])/2}'; }

# run_loadlab MODE: one bounded run on the generator CPU; prints "rate cpu_us_per_unit".
run_loadlab() {
	local extra=() unit=ok
	[ "$1" = newconn ] && extra=(--new-conn) && unit=hs
	/usr/bin/time -f "%U %S" -o "$TMP/time" \
		taskset -c "$GCPU" "$LOADLAB" gen --http3 --cpus "$GCPU" -c "$CONNS" -d "${DUR}s" --warmup 1s \
		--timeout 5s -q --json "$TMP/out.json" "${TLSARGS[@]}" "${extra[@]}" "$URL"
	local cpu all rate
	cpu=$(awk '{print $1+$2}' "$TMP/time")
	# Every request of the process (warmup included) against its whole CPU time.
	all=$(jq '[.per_second[] | .ok + .non2xx + .errors] | add' "$TMP/out.json")
	if [ "$unit" = hs ]; then rate=$(jq .handshake_rate "$TMP/out.json"); else rate=$(jq .achieved_rate "$TMP/out.json"); fi
	local errs
	errs=$(jq '[.errors[]] | add' "$TMP/out.json")
	[ "$errs" = 0 ] || echo "  (loadlab $1: $errs errors: $(jq -c .error_samples "$TMP/out.json"))" >&2
	awk -v r="$rate" -v c="$cpu" -v n="$all" 'BEGIN {printf "%s %.1f\n", r, (n > 0 ? c * 1e6 / n : 0)}'
}

# h2load: Debian's build may lack HTTP/3 (it needs ngtcp2/nghttp3); try it.
H2LOAD_H3=no
if command -v h2load >/dev/null; then
	if timeout 10 h2load --npn-list=h3 -n 1 -c 1 -H "Host: localhost:$PORT" "$URL" 2>&1 | grep -q "Application protocol: h3"; then
		H2LOAD_H3=yes
	fi
fi

# run_h2load keepalive: like run_loadlab (h2load has no per-request new connections).
run_h2load() {
	/usr/bin/time -f "%U %S" -o "$TMP/time" \
		timeout $((DUR + 15)) taskset -c "$GCPU" h2load --npn-list=h3 -c "$CONNS" -D "$DUR" --warm-up-time=1 \
		-H "Host: localhost:$PORT" "$URL" >"$TMP/h2load.out" 2>&1 || true
	local rps n cpu
	rps=$(awk '/^finished in/ {gsub(",", "", $4); print $4}' "$TMP/h2load.out")
	n=$(awk '/^requests:/ {print $8}' "$TMP/h2load.out")
	cpu=$(awk '{print $1+$2}' "$TMP/time")
	awk -v r="${rps:-0}" -v c="$cpu" -v n="${n:-0}" 'BEGIN {printf "%s %.1f\n", r, (n > 0 ? c * 1e6 / n : 0)}'
}

echo "bench-h3: server $SERVER_NAME on CPU $SCPU, generator on CPU $GCPU, $CONNS connections, ${DUR}s runs (1s warmup), $ROUNDS rounds, medians"
echo "bench-h3: loopback $URL (1 KiB body)"
if [ "$H2LOAD_H3" = yes ]; then
	echo "bench-h3: h2load $(h2load --version | awk '{print $2}') speaks HTTP/3: compared below"
else
	echo "bench-h3: h2load $(command -v h2load >/dev/null && h2load --version | awk '{print $2}') has no HTTP/3 (Debian builds it without ngtcp2/nghttp3): loadlab alone"
fi
echo "bench-h3: $(sysctl -n net.core.rmem_max 2>/dev/null | awk '{printf "net.core.rmem_max %d KiB", $1/1024}'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A RATE CPU
for mode in keepalive newconn; do
	for tool in loadlab h2load; do
		[ "$tool" = h2load ] && { [ "$H2LOAD_H3" = yes ] && [ "$mode" = keepalive ] || continue; }
		rates=() cpus=()
		for r in $(seq "$ROUNDS"); do
			read -r rate cpu < <("run_$tool" "$mode")
			echo "  round $r: $tool $mode: $rate/s, $cpu CPU µs per $([ $mode = newconn ] && echo handshake || echo request)"
			rates+=("$rate") cpus+=("$cpu")
		done
		RATE[$tool.$mode]=$(printf "%s\n" "${rates[@]}" | median)
		CPU[$tool.$mode]=$(printf "%s\n" "${cpus[@]}" | median)
	done
done

echo
printf "%-8s %-28s %14s %22s\n" tool test "median rate/s" "median CPU µs/unit"
printf "%-8s %-28s %14s %22s\n" loadlab "keep-alive requests" "${RATE[loadlab.keepalive]}" "${CPU[loadlab.keepalive]} per request"
[ "$H2LOAD_H3" = yes ] && printf "%-8s %-28s %14s %22s\n" h2load "keep-alive requests" "${RATE[h2load.keepalive]}" "${CPU[h2load.keepalive]} per request"
printf "%-8s %-28s %14s %22s\n" loadlab "--new-conn handshakes" "${RATE[loadlab.newconn]}" "${CPU[loadlab.newconn]} per handshake"
