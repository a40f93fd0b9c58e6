#!/usr/bin/env bash
# bench-gen.sh: generator CPU cost per request, loadlab against its peers.
#
# nginx (one worker, access_log off, 127.0.0.1 only) is pinned to SERVER_CPU;
# each generator in turn is pinned to GEN_CPU and timed with perf stat
# (task-clock and its user/kernel split; this VM has no hardware counters, so
# no instruction counts) or, without perf, /usr/bin/time.
# Generator CPU per request = (user + sys seconds) / 2xx responses.
#
# The floor: scripts/floor, a client that only writes the serialized request
# and reads the response (no parsing, timing or recording), over epoll
# (floor-epoll), io_uring with multishot receives (floor-uring) and io_uring
# with each send linked to a single-shot receive, its completion skipped
# (floor-uring-link), runs in the closed scenarios: the kernel's own cost for
# the same traffic, how far each tool is above it, and what linking buys
# (floor-uring-link/floor-uring).
#
# Scenarios (SCENARIOS, default all three):
# loadlab runs on both I/O paths: loadlab-epoll (--io epoll) and loadlab-uring
# (--io uring); in rate-1k with a tolerance, loadlab-1ms-epoll and so on.
#
#   closed-1k  closed loop, CONNS connections, 1 KB file: loadlab vs wrk
#              (target loadlab-uring/wrk <= 0.75; epoll's was 0.8)
#   rate-1k    open loop at RATE req/s, CONNS connections, 1 KB file: loadlab
#              at --pacing-tolerance 0 (each request at its own time), 100us
#              and 1ms vs h2load --h1 --rps RATE/CONNS vs vegeta
#              (targets loadlab-1ms-uring/h2load <= 0.6, loadlab-uring/h2load
#              <= 1.2, loadlab-epoll/vegeta <= 0.2;
#              the tolerance-0 ratio is reported). Every tool sends the same
#              number of requests, RATE x DURATION (loadlab and h2load -n,
#              vegeta -duration), and its cost is its process's user + sys
#              CPU time over them: h2load's wall-clock -D runs and
#              per-second counts once made it look 3x dearer than it is.
#   closed-1m  closed loop, CONNS_1M connections, 1 MiB file: loadlab vs wrk,
#              generator CPU per GB read (target loadlab/wrk <= 0.7)
# (closed-1k and closed-1m also run the floor, see above)
#
# METRICS=1 adds, in every scenario, each loadlab run again with
# --metrics-addr on a free loopback port (suffix +metrics; --metrics-linger 0,
# so the wall time is the run's) while curl scrapes /metrics once a second, as
# a Prometheus would, and reports its cost over the same run without
# (target <= 1.02: metrics cost at most 2% more generator CPU per request).
# TOOLS="loadlab-epoll loadlab-epoll+metrics ..." runs only those (and, with BEFORE, their before- rows) of a
# scenario's tools (and the ratios between them).
#
# BEFORE=PATH runs a second loadlab binary (another commit's build) beside
# this checkout's: every loadlab tool T gets a row before-T, alternated with
# the others in each round, and the pair T/before-T (this checkout over the
# other; its per-round ratios show the noise) is in the summary.
#
# Environment: SERVER_CPU=0 GEN_CPU=1 DURATION=10 ROUNDS=3 CONNS=50
#   RATE=20000 CONNS_1M=10 WARMUP=2 (seconds of unmeasured wrk before each
#   scenario; 0 = none) SCENARIOS="closed-1k rate-1k closed-1m" METRICS=0
#   TOOLS="" BEFORE=""
#
# Output: one line per tool per round, a per-round ratio line, a summary of
# medians and ratios; results/bench-gen.tsv (every run) and
# results/bench-gen-summary.tsv (medians, ratios, targets, verdicts).
# Tool logs of the last run are kept in results/bench-gen.logs/.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/bench-common.sh"

RATE=${RATE:-20000}
CONNS_1M=${CONNS_1M:-10}
WARMUP=${WARMUP:-2}
SCENARIOS=${SCENARIOS:-closed-1k rate-1k closed-1m}
if ! [[ $RATE =~ ^[0-9]+$ ]] || ((RATE == 0)); then die "RATE must be a positive integer (got '$RATE')"; fi
if ! [[ $CONNS_1M =~ ^[0-9]+$ ]] || ((CONNS_1M == 0)); then die "CONNS_1M must be a positive integer (got '$CONNS_1M')"; fi
[[ $WARMUP =~ ^[0-9]+$ ]] || die "WARMUP must be a non-negative integer (got '$WARMUP')"
METRICS=${METRICS:-0}
TOOLS=${TOOLS:-}
[[ $METRICS == [01] ]] || die "METRICS must be 0 or 1 (got '$METRICS')"
for s in $SCENARIOS; do
	case $s in closed-1k | rate-1k | closed-1m) ;; *) die "unknown scenario '$s': use closed-1k, rate-1k, closed-1m" ;; esac
done

TAG=${TAG:-}
[[ $TAG =~ ^[A-Za-z0-9._-]*$ ]] || die "TAG may hold only letters, digits, . _ - (got '$TAG')"
RAW=$RESULTS/bench-gen${TAG:+-$TAG}.tsv
SUMMARY=$RESULTS/bench-gen${TAG:+-$TAG}-summary.tsv
LOGS=$RESULTS/bench-gen${TAG:+-$TAG}.logs

bench_init
need_apt nginx:nginx wrk:wrk h2load:nghttp2-client jq:jq curl:curl
need_go vegeta github.com/tsenart/vegeta/v12@v12.13.0
build_loadlab
build_floor

# --- server -------------------------------------------------------------
PORT=$(free_port)
head -c 1024 /dev/urandom >"$TMP/1k"
head -c 1048576 /dev/urandom >"$TMP/1m"
chmod 644 "$TMP/1k" "$TMP/1m"
{
	nginx_conf_head
	cat <<EOF
  server {
    listen 127.0.0.1:$PORT;
    root $TMP;
    location / { }
  }
}
EOF
} >"$TMP/nginx.conf"
start_nginx "$TMP/nginx.conf" "$PORT"
BASE=http://127.0.0.1:$PORT
check_url "$BASE/1k" 1024
check_url "$BASE/1m" 1048576
echo "GET $BASE/1k" >"$TMP/targets.txt"

# --- parsers: each prints "ok errors rate bytes" ----------------------------

# parse_wrk FILE: "N requests in 10.00s, 1.39GB read", Non-2xx, socket errors.
parse_wrk() {
	awk '
	function dur(s) { if (s ~ /ms$/) return s / 1000; if (s ~ /us$/) return s / 1e6; if (s ~ /m$/) return s * 60; return s + 0 }
	function bytes(s,  u, v) { u = s; gsub(/[0-9.]/, "", u); v = s + 0
		if (u == "KB") v *= 1024; else if (u == "MB") v *= 1048576; else if (u == "GB") v *= 1073741824; else if (u == "TB") v *= 1099511627776
		return v }
	/ requests in / { n = $1; d = $4; sub(/,$/, "", d); secs = dur(d); b = bytes($5) }
	/Non-2xx or 3xx responses:/ { bad = $NF }
	/Socket errors:/ { for (i = 3; i <= NF; i += 2) { x = $(i + 1); sub(/,/, "", x); se += x } }
	END { if (n == "") exit 1; ok = n - bad; printf "%d %d %.1f %.0f\n", ok, bad + se, (secs > 0 ? ok / secs : 0), b }' "$1"
}

# parse_loadlab FILE: the --json result.
parse_loadlab() {
	jq -r '"\(.ok) \(.requests - .ok) \(.achieved_rate) \(.bytes_read)"' "$1"
}

# parse_vegeta FILE: `vegeta report -type=json`.
parse_vegeta() {
	jq -r '((.requests * .success) + 0.5 | floor) as $ok | "\($ok) \(.requests - $ok) \(.throughput) \(.bytes_in.total)"' "$1"
}

# --- one run -----------------------------------------------------------------

# run_one SCENARIO ROUND TOOL: runs, prints one line, appends a row to $RAW
# and sets LAST_COST (µs per request, or ms per GB for closed-1m; "-" on failure).
run_one() {
	local sc=$1 round=$2 tool=$3 name="$1-r$2-$3" url conns rate="" limit=$((DURATION + 30))
	local rc=0 parsed wall user sys cpu ok errs rps bytes cost unit note=""
	url=$BASE/1k conns=$CONNS
	[[ $sc == closed-1m ]] && url=$BASE/1m conns=$CONNS_1M
	[[ $sc == rate-1k ]] && rate=$RATE
	local l1
	l1=$(load1)
	local n=$((RATE * DURATION))
	local LL LTOOL
	loadlab_words "$tool"
	case $LTOOL in
	loadlab | loadlab-*)
		# [before-]loadlab-[TOLERANCE-]IO[+metrics]
		local base=${LTOOL%+metrics} mflags=() scraper=
		local io=${base##*-} tol=0 mid=${base#loadlab-}
		[[ $mid == *-* ]] && tol=${mid%-*}
		if [[ $tool == *+metrics ]]; then
			local mport
			mport=$(free_port)
			mflags=(--metrics-addr "127.0.0.1:$mport" --metrics-linger 0)
			# A scrape a second, as Prometheus would: the endpoint's cost is
			# the generator's.
			(while sleep 1; do curl -s -o /dev/null "http://127.0.0.1:$mport/metrics" || true; done) &
			scraper=$!
		fi
		if [[ -n $rate ]]; then
			timed "$limit" "$name" "${LL[@]}" gen --io "$io" -c "$conns" -n "$n" -d "$((DURATION + 20))s" -r "$rate" \
				--pacing-tolerance "$tol" --cpus "$GEN_CPU" "${mflags[@]}" --json "$TMP/$name.json" -q "$url" || rc=$?
		else
			timed "$limit" "$name" "${LL[@]}" gen --io "$io" -c "$conns" -d "${DURATION}s" \
				--cpus "$GEN_CPU" "${mflags[@]}" --json "$TMP/$name.json" -q "$url" || rc=$?
		fi
		if [[ -n $scraper ]]; then
			kill "$scraper" 2>/dev/null || true
			wait "$scraper" 2>/dev/null || true
		fi
		;;
	floor-*)
		timed "$limit" "$name" "$ROOT/bin/floor" -io "${tool#floor-}" -c "$conns" -d "${DURATION}s" "$url" || rc=$?
		;;
	wrk)
		timed "$limit" "$name" wrk -t1 -c "$conns" -d "${DURATION}s" "$url" || rc=$?
		;;
	h2load)
		timed "$limit" "$name" h2load --h1 -t 1 -c "$conns" -n "$n" \
			--rps "$(awk -v r="$rate" -v c="$conns" 'BEGIN { printf "%g", r / c }')" "$url" || rc=$?
		;;
	vegeta)
		timed "$limit" "$name" "$GOTOOLS/vegeta" attack -rate="$rate" -duration="${DURATION}s" \
			-workers="$conns" -max-workers="$conns" -targets="$TMP/targets.txt" -output="$TMP/$name.bin" || rc=$?
		((rc == 0)) && "$GOTOOLS/vegeta" report -type=json "$TMP/$name.bin" >"$TMP/$name.json"
		rm -f "$TMP/$name.bin"
		;;
	esac
	cp "$TMP/$name".* "$LOGS/" 2>/dev/null || true
	if ((rc != 0)); then
		printf '%-9s r%-2s %-25s FAILED (exit %d): see %s/%s.err\n' "$sc" "$round" "$tool" "$rc" "$LOGS" "$name"
		printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$sc" "$round" "$tool" "$l1" >>"$RAW"
		LAST_COST=-
		return 0
	fi
	case $LTOOL in
	loadlab | loadlab-*) parsed=$(parse_loadlab "$TMP/$name.json") ;;
	vegeta) parsed=$(parse_vegeta "$TMP/$name.json") ;;
	floor-*) parsed=$(parse_floor "$TMP/$name.out") ;;
	*) parsed=$(parse_"$tool" "$TMP/$name.out") ;;
	esac
	read -r wall user sys < <(time_fields "$name")
	read -r ok errs rps bytes <<<"$parsed"
	# loadlab's achieved_rate divides every 2xx, including those of the drain
	# after -d (an open loop that fell behind keeps sending what was due), by
	# -d alone; responses per wall-clock second are comparable with the peers.
	[[ $LTOOL == loadlab* ]] && rps=$(awk -v n="$ok" -v w="$wall" 'BEGIN { printf "%.1f", (w > 0 ? n / w : 0) }')
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	if [[ $sc == closed-1m ]]; then
		unit=ms/GB
		cost=$(awk -v c="$cpu" -v b="$bytes" 'BEGIN { if (b > 0) printf "%.1f", c * 1000 / (b / 1e9); else print "-" }')
	else
		unit=us/req
		cost=$(awk -v c="$cpu" -v n="$ok" 'BEGIN { if (n > 0) printf "%.2f", c * 1e6 / n; else print "-" }')
	fi
	[[ -n $rate ]] && awk -v r="$rps" -v t="$rate" 'BEGIN { exit !(r < 0.95 * t) }' && note="  (below the $rate/s asked)"
	((errs > 0)) && note+="  ($errs errors)"
	if [[ $LTOOL == loadlab* && -n $rate ]]; then
		note+=$(jq -r '"  lag p99 \(.generator.lag_p99_us) µs (tolerance \(.generator.pacing_tolerance_us)), p50 \(.latency_us.p50) µs"' "$TMP/$name.json")
	fi
	printf '%-9s r%-2s %-25s %9.0f req/s  %9d ok  %6.2fs cpu (u %.2f s %.2f)  %8s %s%s%s\n' \
		"$sc" "$round" "$tool" "$rps" "$ok" "$cpu" "$user" "$sys" "$cost" "$unit" \
		"$([[ $sc == closed-1m ]] && awk -v b="$bytes" 'BEGIN { printf "  %.2f GB", b / 1e9 }')" "$note"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$sc" "$round" "$tool" "$wall" "$user" "$sys" "$cpu" "$ok" "$errs" "$rps" "$bytes" "$cost" "$unit" "$l1" >>"$RAW"
	LAST_COST=$cost
}

# all_tools_of SCENARIO prints every generator compared in it, loadlab first.
all_tools_of() {
	local t list
	case $1 in
	closed-1k | closed-1m) list="loadlab-epoll loadlab-uring wrk floor-epoll floor-uring floor-uring-link" ;;
	rate-1k) list="loadlab-epoll loadlab-uring loadlab-1ms-epoll loadlab-1ms-uring h2load vegeta" ;;
	esac
	if ((METRICS)); then
		for t in $list; do [[ $t == loadlab-* ]] && list+=" $t+metrics"; done
	fi
	with_before "$list"
}

# tools_of SCENARIO prints the generators run in it: all of them, or those
# of TOOLS.
tools_of() {
	local t out=""
	for t in $(all_tools_of "$1"); do
		[[ -z $TOOLS || " $TOOLS " == *" ${t#before-} "* ]] && out+="$t " # T keeps its before-T
	done
	echo "$out"
}

# pairs_of SCENARIO prints the "LOADLAB_TOOL/PEER" ratios a scenario reports,
# those of tools that run.
pairs_of() {
	local p t list run
	case $1 in
	closed-1k | closed-1m) list="loadlab-epoll/wrk loadlab-uring/wrk loadlab-uring/loadlab-epoll loadlab-epoll/floor-epoll loadlab-uring/floor-uring wrk/floor-epoll floor-uring/floor-epoll floor-uring-link/floor-uring" ;;
	rate-1k) list="loadlab-epoll/h2load loadlab-uring/h2load loadlab-1ms-epoll/h2load loadlab-1ms-uring/h2load loadlab-uring/loadlab-epoll loadlab-1ms-uring/loadlab-1ms-epoll loadlab-epoll/vegeta" ;;
	esac
	for t in $(all_tools_of "$1"); do
		[[ $t == loadlab-*+metrics ]] && list+=" $t/${t%+metrics}"
		[[ $t == before-* ]] && list+=" ${t#before-}/$t"
	done
	run=" $(tools_of "$1") "
	for p in $list; do
		[[ $run == *" ${p%/*} "* && $run == *" ${p#*/} "* ]] && echo "$p"
	done
}

# target_of SCENARIO PAIR prints the target ratio of a pair ("-" = reported only).
target_of() {
	case $1/$2 in
	*/before-*) echo - ;; # this checkout over BEFORE: reported, judged against its noise
	closed-1k/loadlab-*/wrk) echo 0.75 ;;
	closed-1m/loadlab-*/wrk) echo 0.7 ;;
	rate-1k/loadlab-1ms-*/h2load) echo 0.6 ;;
	rate-1k/loadlab-*/h2load) echo 1.2 ;;
	*+metrics/*) echo 1.02 ;;
	rate-1k/loadlab-epoll/vegeta) echo 0.2 ;;
	*) echo - ;;
	esac
}

# --- main --------------------------------------------------------------------
rm -rf "$LOGS"
mkdir -p "$LOGS"
printf 'scenario\tround\ttool\twall_s\tuser_s\tsys_s\tcpu_s\tok\terrors\trate\tbytes\tcost\tunit\tload1\n' >"$RAW"
machine_header
echo "# nginx $(nginx -v 2>&1 | sed 's/.*\///'), wrk $(wrk -v 2>&1 | head -1 | awk '{print $2}'), $(h2load --version | head -1), vegeta v12.13.0"
declare -A ROUND_RATIOS=()
for sc in $SCENARIOS; do
	read -r -a tools <<<"$(tools_of "$sc")"
	echo
	case $sc in
	closed-1k) echo "== closed-1k: closed loop, $CONNS connections, 1 KB, generator CPU µs per 2xx response" ;;
	rate-1k) echo "== rate-1k: open loop at $RATE req/s, $CONNS connections, 1 KB, generator CPU µs per 2xx response" ;;
	closed-1m) echo "== closed-1m: closed loop, $CONNS_1M connections, 1 MiB, generator CPU ms per GB read" ;;
	esac
	if ((WARMUP > 0)); then
		u=$BASE/1k c=$CONNS
		[[ $sc == closed-1m ]] && u=$BASE/1m c=$CONNS_1M
		timed $((WARMUP + 30)) "warmup-$sc" wrk -t1 -c "$c" -d "${WARMUP}s" "$u" >/dev/null || true
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		declare -A cost=()
		while read -r t; do
			run_one "$sc" "$r" "$t"
			cost[$t]=$LAST_COST
		done < <(rotate "$r" "${tools[@]}")
		line=""
		for pair in $(pairs_of "$sc"); do
			rr=$(ratio "${cost[${pair%/*}]}" "${cost[${pair#*/}]}")
			ROUND_RATIOS[$sc/$pair]+="$rr "
			line+="  $pair $rr"
		done
		printf '%-9s r%-2s ratio  %s\n' "$sc" "$r" "$line"
		unset cost
	done
done

# --- summary -------------------------------------------------------------------
# col SCENARIO TOOL COLUMN prints that column of every run of TOOL in SCENARIO.
col() { awk -F'\t' -v s="$1" -v t="$2" -v c="$3" 'NR > 1 && $1 == s && $3 == t { print $c }' "$RAW"; }

echo
echo "== summary (medians over $ROUNDS rounds; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
printf 'scenario\ttool\truns\tmedian_rate\tmedian_cost\tunit\n' >"$SUMMARY"
printf '%-9s %-25s %5s %11s %12s  %s\n' scenario tool runs "req/s" cost unit
for sc in $SCENARIOS; do
	read -r -a tools <<<"$(tools_of "$sc")"
	unit=us/req
	[[ $sc == closed-1m ]] && unit=ms/GB
	for t in "${tools[@]}"; do
		runs=$(col "$sc" "$t" 12 | grep -cv '^-$' || true)
		mrate=$(col "$sc" "$t" 10 | median)
		mcost=$(col "$sc" "$t" 12 | median)
		printf '%-9s %-25s %5s %11.0f %12s  %s\n' "$sc" "$t" "$runs" "${mrate/-/0}" "$mcost" "$unit"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$t" "$runs" "$mrate" "$mcost" "$unit" >>"$SUMMARY"
	done
done
echo
printf 'scenario\tpair\tratio_of_medians\tmedian_round_ratio\ttarget\tverdict\n' >>"$SUMMARY"
printf '%-9s %-44s %10s %12s %7s  %s\n' scenario pair ratio "round-ratio" target verdict
for sc in $SCENARIOS; do
	for pair in $(pairs_of "$sc"); do
		a=$(col "$sc" "${pair%/*}" 12 | median)
		b=$(col "$sc" "${pair#*/}" 12 | median)
		rat=$(ratio "$a" "$b")
		rr=$(tr ' ' '\n' <<<"${ROUND_RATIOS[$sc/$pair]}" | median)
		tgt=$(target_of "$sc" "$pair")
		v=-
		[[ $tgt != - ]] && v=$(verdict "$rat" "$tgt")
		printf '%-9s %-44s %10s %12s %7s  %s\n' "$sc" "$pair" "$rat" "$rr" "$tgt" "$v"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$sc" "$pair" "$rat" "$rr" "$tgt" "$v" >>"$SUMMARY"
	done
done
if [[ " $SCENARIOS " == *" rate-1k "* ]]; then
	short=$(awk -F'\t' -v r="$RATE" 'NR > 1 && $1 == "rate-1k" && $10 != "-" && $10 < 0.95 * r { n++ } END { print n + 0 }' "$RAW")
	if ((short > 0)); then
		echo
		echo "note: $short rate-1k runs fell short of $RATE req/s, so those tools were compared at different loads;"
		echo "      rerun with a RATE every tool reaches (e.g. RATE=2000) for an equal-load comparison"
	fi
fi
echo
echo "ratio = median loadlab cost / median tool cost (lower is better for loadlab); round-ratio = median of the per-round ratios"
echo "wrote $RAW and $SUMMARY; tool logs in $LOGS"
