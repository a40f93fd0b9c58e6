#!/usr/bin/env bash
# bench-h2.sh: generator CPU cost per request over HTTP/2, loadlab against
# h2load (HTTP/2 is h2load's native protocol).
#
# The server (nginx, one worker, access_log off, 127.0.0.1 only; or
# SERVER=loadlab for the built-in backend with --h2) is pinned to
# SERVER_CPU; each generator in turn is pinned to GEN_CPU and timed with
# perf stat (task-clock, user/kernel split: this VM has no hardware
# counters) or /usr/bin/time over the same number of requests. Generator CPU per request
# = (user + sys seconds) / 2xx responses.
#
# Scenarios (SCENARIOS, default both):
#   closed  closed loop, CONNS connections x STREAMS streams, 1 KB:
#           loadlab gen --h2 -c CONNS --streams STREAMS -n REQUESTS
#           h2load -c CONNS -m STREAMS -n REQUESTS
#   rate    open loop at RATE req/s over CONNS x STREAMS, 1 KB, RATE x
#           DURATION requests: loadlab gen --h2 -r RATE -n RATExDURATION at
#           --pacing-tolerance 0 (each request at its own time) and 1ms
#           (loadlab-1ms: requests due within a millisecond leave together,
#           as h2load's per-client timers send them), h2load --rps
#           RATE/CONNS -n RATExDURATION
#   loadlab runs on both I/O paths: loadlab-epoll (--io epoll), loadlab-uring
#   (--io uring), and in rate loadlab-1ms-epoll, loadlab-1ms-uring.
#   The floor (closed, PROTO=h2c): scripts/floor -h2, a client that only
#   writes one pre-encoded HEADERS frame per request and reads frames by
#   their 9-byte headers, counting a response at END_STREAM, with no other
#   parsing and no recording, over epoll (floor-epoll), same CONNS x STREAMS
#   and REQUESTS: the kernel's own cost of this traffic. It speaks h2c only,
#   so PROTO=h2 runs no floor row.
#   Targets: closed loadlab-*/h2load <= 0.75; rate loadlab-1ms-*/h2load <= 0.6
#   and loadlab-{epoll,uring}/h2load (tolerance 0) <= 1.2. Every tool sends the same number of
#   requests and its cost is its process's user + sys CPU time over them.
#
# Environment: SERVER_CPU=0 GEN_CPU=1 ROUNDS=3 CONNS=10 STREAMS=10
#   REQUESTS=200000 (closed) RATE=20000 DURATION=10 (rate: RATE x DURATION
#   requests) PROTO=h2c|h2 (h2: TLS with ALPN h2, certificates from
#   `loadlab certs`) SERVER=nginx|loadlab SCENARIOS="closed rate"
#   BEFORE=PATH (a second loadlab binary, another commit's build: every
#   loadlab tool T gets a row before-T, alternated with the others in each
#   round, and T/before-T is in the summary)
#
# Output: one line per tool per round, per-round ratios, medians; rows in
# results/bench-h2.tsv and results/bench-h2-summary.tsv; logs of the last
# run in results/bench-h2.logs/.
set -euo pipefail

CONNS=${CONNS:-10} # before bench-common.sh, whose default is 50

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/bench-common.sh"

STREAMS=${STREAMS:-10}
REQUESTS=${REQUESTS:-200000}
RATE=${RATE:-20000}
PROTO=${PROTO:-h2c}
SERVER=${SERVER:-nginx}
SCENARIOS=${SCENARIOS:-closed rate}
for v in STREAMS REQUESTS RATE; do
	[[ ${!v} =~ ^[0-9]+$ ]] && ((${!v} > 0)) || die "$v must be a positive integer (got '${!v}')"
done
case $PROTO in h2c | h2) ;; *) die "PROTO must be h2c or h2 (got '$PROTO')" ;; esac
case $SERVER in nginx | loadlab) ;; *) die "SERVER must be nginx or loadlab (got '$SERVER')" ;; esac
for s in $SCENARIOS; do
	case $s in closed | rate) ;; *) die "unknown scenario '$s': use closed, rate" ;; esac
done
TAG=${TAG:-}
[[ $TAG =~ ^[A-Za-z0-9._-]*$ ]] || die "TAG may hold only letters, digits, . _ - (got '$TAG')"
RAW=$RESULTS/bench-h2${TAG:+-$TAG}.tsv
SUMMARY=$RESULTS/bench-h2${TAG:+-$TAG}-summary.tsv
LOGS=$RESULTS/bench-h2${TAG:+-$TAG}.logs

bench_init
need_apt nginx:nginx h2load:nghttp2-client jq:jq curl:curl
build_loadlab
[[ $PROTO == h2c ]] && build_floor

# --- server -------------------------------------------------------------
PORT=$(free_port)
SCHEME=http CURL_PROTO=(--http2-prior-knowledge) CA=()
if [[ $PROTO == h2 ]]; then
	"$LOADLAB" certs --out "$TMP/certs" --key p256 >/dev/null
	SCHEME=https CURL_PROTO=(--http2 --cacert "$TMP/certs/p256/ca.pem") CA=(--ca "$TMP/certs/p256/ca.pem")
fi
SERVE_PID=""
stop_serve() {
	[[ -z $SERVE_PID ]] && return 0
	kill -TERM "$SERVE_PID" 2>/dev/null || true
	wait "$SERVE_PID" 2>/dev/null || true
	SERVE_PID=""
}
trap 'rc=$?; stop_serve; (exit "$rc"); cleanup' EXIT # INT and TERM exit through it (bench_init)
if [[ $SERVER == nginx ]]; then
	head -c 1024 /dev/urandom >"$TMP/1k"
	chmod 644 "$TMP/1k"
	listen="listen 127.0.0.1:$PORT http2;"
	[[ $PROTO == h2 ]] && listen="listen 127.0.0.1:$PORT ssl http2;
    ssl_certificate $TMP/certs/p256/fullchain.pem;
    ssl_certificate_key $TMP/certs/p256/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;"
	{
		nginx_conf_head
		cat <<EOF
  http2_max_concurrent_streams 128;
  server {
    $listen
    root $TMP;
    location / { }
  }
}
EOF
	} >"$TMP/nginx.conf"
	start_nginx "$TMP/nginx.conf" "$PORT"
else
	tls=()
	[[ $PROTO == h2 ]] && tls=(--tls-cert "$TMP/certs/p256/fullchain.pem" --tls-key "$TMP/certs/p256/key.pem")
	"$LOADLAB" serve --listen "127.0.0.1:$PORT" --h2 --cpus "$SERVER_CPU" "${tls[@]}" 2>"$TMP/serve.err" &
	SERVE_PID=$!
	for ((i = 0; i < 100; i++)); do
		kill -0 "$SERVE_PID" 2>/dev/null || die "loadlab serve exited: $(tr '\n' ' ' <"$TMP/serve.err")"
		grep -q '^serving' "$TMP/serve.err" && break
		sleep 0.1
	done
fi
URL=$SCHEME://127.0.0.1:$PORT/1k
got=$(curl -s "${CURL_PROTO[@]}" -o /dev/null -w '%{http_code} %{size_download} %{http_version}' --max-time 10 "$URL") || true
[[ $got == "200 1024 2" ]] || die "$URL over HTTP/2 answered '$got', want '200 1024 2'"

# --- parsers: each prints "ok errors rate" (parse_h2load is in bench-common.sh) ---

parse_loadlab() {
	jq -r '"\(.ok) \(.requests - .ok) \(.achieved_rate)"' "$1"
}

# run_one SCENARIO ROUND TOOL: runs, prints one line, appends a row to $RAW
# and sets LAST_COST (µs per 2xx response, or "-").
run_one() {
	local sc=$1 round=$2 tool=$3 name="$1-r$2-$3" n=$REQUESTS rate="" limit
	local rc=0 parsed wall user sys cpu ok errs rps cost note=""
	[[ $sc == rate ]] && rate=$RATE n=$((RATE * DURATION))
	limit=$((n / 1000 + DURATION + 60))
	local LL LTOOL
	loadlab_words "$tool"
	case $LTOOL in
	loadlab | loadlab-*)
		# -n bounds the run (the same requests as h2load); -d only keeps a
		# stuck run from lasting forever.
		# [before-]loadlab-[TOLERANCE-]IO
		local io=${LTOOL##*-} tol=0 mid=${LTOOL#loadlab-}
		[[ $mid == *-* ]] && tol=${mid%-*}
		timed "$limit" "$name" "${LL[@]}" gen --h2 --io "$io" -c "$CONNS" --streams "$STREAMS" -n "$n" -d "$((limit - 10))s" \
			${rate:+-r "$rate" --pacing-tolerance "$tol"} --cpus "$GEN_CPU" "${CA[@]}" --json "$TMP/$name.json" -q "$URL" || rc=$?
		;;
	floor-*)
		timed "$limit" "$name" "$ROOT/bin/floor" -h2 -io "${tool#floor-}" -c "$CONNS" -m "$STREAMS" -n "$n" -d "$((limit - 10))s" "$URL" || rc=$?
		;;
	h2load)
		timed "$limit" "$name" h2load -t 1 -c "$CONNS" -m "$STREAMS" -n "$n" \
			${rate:+--rps "$(awk -v r="$rate" -v c="$CONNS" 'BEGIN { printf "%g", r / c }')"} "$URL" || rc=$?
		;;
	esac
	cp "$TMP/$name".* "$LOGS/" 2>/dev/null || true
	if ((rc != 0)); then
		printf '%-6s r%-2s %-25s FAILED (exit %d): see %s/%s.err\n' "$sc" "$round" "$tool" "$rc" "$LOGS" "$name"
		printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$sc" "$round" "$tool" "$(load1)" >>"$RAW"
		LAST_COST=-
		return 0
	fi
	case $LTOOL in
	loadlab*) parsed=$(parse_loadlab "$TMP/$name.json") ;;
	h2load) parsed=$(parse_h2load "$TMP/$name.out") ;;
	floor-*) parsed=$(parse_floor "$TMP/$name.out") ;;
	esac
	read -r wall user sys < <(time_fields "$name")
	read -r ok errs rps _ <<<"$parsed"
	rps=$(awk -v n="$ok" -v w="$wall" 'BEGIN { printf "%.1f", (w > 0 ? n / w : 0) }') # per wall-clock second, alike for both
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	cost=$(awk -v c="$cpu" -v n="$ok" 'BEGIN { if (n > 0) printf "%.2f", c * 1e6 / n; else print "-" }')
	[[ -n $rate ]] && awk -v r="$rps" -v t="$rate" 'BEGIN { exit !(r < 0.95 * t) }' && note="  (below the $rate/s asked)"
	((errs > 0)) && note+="  ($errs errors)"
	((ok < n)) && note+="  (only $ok of $n succeeded)"
	if [[ $LTOOL == loadlab* ]]; then
		note+=$(jq -r '"  p50 \(.latency_us.p50) µs p99 \(.latency_us.p99) µs" + (if .mode == "open" then ", lag p99 \(.generator.lag_p99_us) µs" else "" end) + (if .generator.bottleneck then "  GENERATOR-LIMITED: \(.generator.reason)" else "" end)' "$TMP/$name.json")
	fi
	printf '%-6s r%-2s %-25s %9.0f req/s  %9d ok  %6.2fs cpu (u %.2f s %.2f)  %8s us/req%s\n' \
		"$sc" "$round" "$tool" "$rps" "$ok" "$cpu" "$user" "$sys" "$cost" "$note"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$sc" "$round" "$tool" "$wall" "$user" "$sys" "$cpu" "$ok" "$errs" "$rps" "$cost" "$(load1)" >>"$RAW"
	LAST_COST=$cost
}

# --- main --------------------------------------------------------------------
rm -rf "$LOGS"
mkdir -p "$LOGS"
printf 'scenario\tround\ttool\twall_s\tuser_s\tsys_s\tcpu_s\tok\terrors\trate\tcost_us\tload1\n' >"$RAW"
machine_header
echo "# server $SERVER ($PROTO) on CPU $SERVER_CPU, $CONNS connections x $STREAMS streams, $(h2load --version | head -1)"
# tools SCENARIO: the generators of a scenario; judged: the loadlab row its
# target applies to.
# FLOOR: the floor's rows (closed, h2c only).
FLOOR=""
[[ $PROTO == h2c ]] && FLOOR=floor-epoll
tools() { if [[ $1 == rate ]]; then with_before "loadlab-epoll loadlab-uring loadlab-1ms-epoll loadlab-1ms-uring h2load"; else with_before "loadlab-epoll loadlab-uring h2load $FLOOR"; fi; }
judged() { if [[ $1 == rate ]]; then echo loadlab-1ms-uring; else echo loadlab-uring; fi; }
# target_of SCENARIO TOOL: the target of TOOL/h2load ("-": none).
target_of() {
	case $1/$2 in
	closed/loadlab-*) echo 0.75 ;;
	rate/loadlab-1ms-*) echo 0.6 ;;
	rate/loadlab-*) echo 1.2 ;;
	*) echo - ;;
	esac
}
declare -A ROUND_RATIOS=()
for sc in $SCENARIOS; do
	echo
	case $sc in
	closed) echo "== closed: closed loop, $CONNS x $STREAMS streams, $REQUESTS requests of 1 KB, generator CPU µs per 2xx response" ;;
	rate) echo "== rate: open loop at $RATE req/s over $CONNS x $STREAMS streams, $((RATE * DURATION)) requests, generator CPU µs per 2xx response" ;;
	esac
	read -r -a TOOLS <<<"$(tools "$sc")"
	J=$(judged "$sc")
	for ((r = 1; r <= ROUNDS; r++)); do
		declare -A cost=()
		while read -r t; do
			run_one "$sc" "$r" "$t"
			cost[$t]=$LAST_COST
		done < <(rotate "$r" "${TOOLS[@]}")
		rr=$(ratio "${cost[$J]}" "${cost[h2load]}")
		ROUND_RATIOS[$sc]+="$rr "
		line="$J/h2load $rr"
		line+="  (uring/epoll $(ratio "${cost[$J]}" "${cost[${J%-uring}-epoll]}"))"
		[[ $sc == closed && -n $FLOOR ]] && line+="  (loadlab-epoll/floor-epoll $(ratio "${cost[loadlab-epoll]}" "${cost[floor-epoll]}"), h2load/floor-epoll $(ratio "${cost[h2load]}" "${cost[floor-epoll]}"))"
		for t in "${TOOLS[@]}"; do [[ $t == before-* ]] && line+="  (${t#before-}/$t $(ratio "${cost[${t#before-}]}" "${cost[$t]}"))"; done
		printf '%-6s r%-2s ratio  %s\n' "$sc" "$r" "$line"
		unset cost
	done
done

col() { awk -F'\t' -v s="$1" -v t="$2" -v c="$3" 'NR > 1 && $1 == s && $3 == t { print $c }' "$RAW"; }
echo
echo "== summary (medians over $ROUNDS rounds; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
printf 'scenario\ttool\truns\tmedian_rate\tmedian_cost_us\tratio_over_h2load\tmedian_round_ratio\ttarget\tverdict\n' >"$SUMMARY"
printf '%-6s %-25s %5s %11s %12s %10s %12s %7s  %s\n' scenario tool runs "req/s" "us/req" "/h2load" "round-ratio" target verdict
for sc in $SCENARIOS; do
	read -r -a TOOLS <<<"$(tools "$sc")"
	J=$(judged "$sc")
	h2=$(col "$sc" h2load 11 | median)
	for t in "${TOOLS[@]}"; do
		runs=$(col "$sc" "$t" 11 | grep -cv '^-$' || true)
		mrate=$(col "$sc" "$t" 10 | median)
		mcost=$(col "$sc" "$t" 11 | median)
		rat=- rr=- tgt=- v=-
		[[ $t == floor-* ]] && rat=$(ratio "$mcost" "$h2")
		if [[ $t == loadlab* ]]; then
			rat=$(ratio "$mcost" "$h2")
			tgt=$(target_of "$sc" "$t")
			v=$(verdict "$rat" "$tgt")
		fi
		[[ $t == before-* ]] && rat=$(ratio "$mcost" "$h2")
		[[ $t == "$J" ]] && rr=$(tr ' ' '\n' <<<"${ROUND_RATIOS[$sc]}" | median)
		printf '%-6s %-25s %5s %11.0f %12s %10s %12s %7s  %s\n' "$sc" "$t" "$runs" "${mrate/-/0}" "$mcost" "$rat" "$rr" "$tgt" "$v"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$runs" "$mrate" "$mcost" "$rat" "$rr" "$tgt" "$v" >>"$SUMMARY"
	done
done
echo
echo "ratio = median loadlab cost / median h2load cost (lower is better for loadlab); every tool runs the same number of requests"
if [[ -n ${BEFORE:-} ]]; then
	for sc in $SCENARIOS; do
		for t in $(tools "$sc"); do
			[[ $t == before-* ]] || continue
			echo "$sc: ${t#before-}/$t $(ratio "$(col "$sc" "${t#before-}" 11 | median)" "$(col "$sc" "$t" 11 | median)") (median costs, this checkout over BEFORE=$BEFORE)"
		done
	done
fi
if [[ -n $FLOOR && " $SCENARIOS " == *" closed "* ]]; then
	fl=$(col closed floor-epoll 11 | median)
	echo "floor (closed): loadlab-epoll/floor-epoll $(ratio "$(col closed loadlab-epoll 11 | median)" "$fl"), loadlab-uring/floor-epoll $(ratio "$(col closed loadlab-uring 11 | median)" "$fl"), h2load/floor-epoll $(ratio "$(col closed h2load 11 | median)" "$fl") (median costs; 1.00 = the kernel's floor)"
fi
echo "wrote $RAW and $SUMMARY; tool logs in $LOGS"
