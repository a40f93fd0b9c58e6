#!/usr/bin/env bash
# bench-handshake.sh: generator CPU cost per full TLS 1.3 handshake, loadlab
# against h2load --h1 and bombardier, and nginx's CPU per handshake beside it.
#
# nginx (one worker, access_log off, 127.0.0.1 only, TLS session cache and
# tickets off, keepalive_timeout 0 so it closes after every response) is
# pinned to SERVER_CPU with one listener per key type. Each generator in turn
# is pinned to GEN_CPU, opens a new connection per request, and is timed with
# /usr/bin/time. CPU per handshake = (user + sys seconds) / handshakes. nginx's
# worker CPU (utime + stime from /proc) over the same run gives its CPU per
# handshake and how busy its core was (CPU seconds / the tool's wall time,
# which includes the tool's start and stop: a slight underestimate).
#
#   loadlab        gen --new-conn --insecure: the lean TLS 1.3 engine, one key
#                  pair per loop reused (tls.client_key_share "reused")
#   loadlab-fresh  the same with --fresh-key-share (a key pair per handshake)
#   loadlab-std    the same with --tls-engine std (crypto/tls)
#   h2load         --h1 -n N (nginx closes each connection, so N requests = N
#                  handshakes; N is calibrated to last about DURATION seconds,
#                  since h2load -D does not exit once it reconnects)
#   bombardier     -k -H 'Connection: close' (handshakes = responses)
#
# Target: loadlab CPU per handshake <= 0.5x bombardier's, with nginx's core
# saturated and loadlab not flagged as the bottleneck. Also printed: the
# P-256 / RSA 4096 handshake-rate factor (how much the key type decides).
#
# Environment: SERVER_CPU=0 GEN_CPU=1 DURATION=10 ROUNDS=3 CONNS=50
#   KEYS="p256 rsa2048 rsa4096" LOADLAB_CLOSE=fin (or rst)
#   TOOLS="loadlab loadlab-fresh loadlab-std h2load bombardier" (a subset)
#
# Output: one line per tool per round, per-round ratios, a summary;
# results/bench-handshake.tsv (every run), results/bench-handshake-summary.tsv
# (medians and ratios per key and tool; rows with key "p256/rsa4096" carry the
# rate factor in median_rate).
# Tool logs of the last run are kept in results/bench-handshake.logs/.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/bench-common.sh"

KEYS=${KEYS:-p256 rsa2048 rsa4096}
LOADLAB_CLOSE=${LOADLAB_CLOSE:-fin}
for k in $KEYS; do
	case $k in p256 | rsa2048 | rsa4096) ;; *) die "unknown key type '$k' in KEYS: use p256, rsa2048, rsa4096" ;; esac
done
case $LOADLAB_CLOSE in fin | rst) ;; *) die "LOADLAB_CLOSE must be fin or rst (got '$LOADLAB_CLOSE')" ;; esac
ALL_TOOLS="loadlab loadlab-fresh loadlab-std h2load bombardier"
read -r -a TOOLS <<<"${TOOLS:-$ALL_TOOLS}"
for t in "${TOOLS[@]}"; do
	[[ " $ALL_TOOLS " == *" $t "* ]] || die "unknown tool '$t' in TOOLS: use some of $ALL_TOOLS"
done
[[ " ${TOOLS[*]} " == *" loadlab "* && " ${TOOLS[*]} " == *" bombardier "* ]] ||
	die "TOOLS must include loadlab and bombardier (the target compares them)"
BOMBARDIER_VERSION=v1.2.6 # github.com/codesenberg/bombardier release, pinned

TAG=${TAG:-}
[[ $TAG =~ ^[A-Za-z0-9._-]*$ ]] || die "TAG may hold only letters, digits, . _ - (got '$TAG')"
RAW=$RESULTS/bench-handshake${TAG:+-$TAG}.tsv
SUMMARY=$RESULTS/bench-handshake${TAG:+-$TAG}-summary.tsv
LOGS=$RESULTS/bench-handshake${TAG:+-$TAG}.logs
CERTS=$ROOT/.cache/certs

bench_init
need_apt nginx:nginx h2load:nghttp2-client jq:jq curl:curl
need_go bombardier github.com/codesenberg/bombardier@$BOMBARDIER_VERSION
build_loadlab
"$LOADLAB" certs --out "$CERTS" --key "$(tr ' ' ',' <<<"$KEYS" | sed 's/,*$//')" >/dev/null ||
	die "loadlab certs --out $CERTS failed: remove $CERTS and rerun"

# --- server: one closing TLS listener per key type ------------------------------
head -c 1024 /dev/urandom >"$TMP/1k"
chmod 644 "$TMP/1k"
declare -A PORT=()
{
	nginx_conf_head
	cat <<EOF
  ssl_protocols TLSv1.2 TLSv1.3;
  ssl_session_cache off;
  ssl_session_tickets off;
  keepalive_timeout 0;
EOF
	for k in $KEYS; do
		PORT[$k]=$(free_port)
		cat <<EOF
  server {
    listen 127.0.0.1:${PORT[$k]} ssl;
    ssl_certificate $CERTS/$k/fullchain.pem;
    ssl_certificate_key $CERTS/$k/key.pem;
    root $TMP;
    location / { }
  }
EOF
	done
	echo "}"
} >"$TMP/nginx.conf"
first=${KEYS%% *}
start_nginx "$TMP/nginx.conf" "${PORT[$first]}"
for k in $KEYS; do check_url "https://127.0.0.1:${PORT[$k]}/1k" 1024 --cacert "$CERTS/$k/ca.pem"; done
NGINX_WORKER=$(pgrep -P "$NGINX_PID" | head -1) || true
[[ -n $NGINX_WORKER && -r /proc/$NGINX_WORKER/stat ]] || die "cannot find nginx's worker (child of pid $NGINX_PID)"
CLK_TCK=$(getconf CLK_TCK)

# nginx_ticks prints the worker's utime + stime in clock ticks (fields 14
# and 15 of /proc/PID/stat, counted after the command name's parenthesis).
nginx_ticks() {
	sed 's/^.*) //' "/proc/$NGINX_WORKER/stat" | awk '{ print $12 + $13 }'
}

# --- parsers: each prints "handshakes ok errors rate" ----------------------------
parse_loadlab() {
	jq -r '"\(.handshakes) \(.ok) \(.requests - .ok) \(.handshake_rate)"' "$1"
}
parse_h2load() {
	awk '
	function dur(s) { if (s ~ /ms$/) return s / 1000; if (s ~ /us$/) return s / 1e6; if (s ~ /m$/ && s !~ /s$/) return s * 60; return s + 0 }
	/^finished in / { d = $3; sub(/,$/, "", d); secs = dur(d) }
	/^requests: / { done = $6; ok = $8; failed = $10 }
	END { if (ok == "") exit 1; printf "%d %d %d %.1f\n", done, ok, failed, (secs > 0 ? done / secs : 0) }' "$1"
}
parse_bombardier() {
	jq -r '.result | (.req1xx + .req2xx + .req3xx + .req4xx + .req5xx + .others) as $n
		| ([(.errors // [])[] | .count] | add // 0) as $e
		| "\($n) \(.req2xx) \($n - .req2xx + $e) \($n / .timeTakenSeconds)"' "$1"
}

# --- one run -----------------------------------------------------------------
declare -A H2N=() # h2load -n per key, calibrated from its last rate

# h2load_n KEY RATE sets H2N[KEY] so a run at RATE handshakes/s lasts DURATION.
h2load_n() {
	H2N[$1]=$(awk -v r="$2" -v d="$DURATION" -v c="$CONNS" 'BEGIN { n = int(r * d); if (n < c) n = c; print n }')
}

# run_one KEY ROUND TOOL: runs, prints one line, appends a row to $RAW and
# sets LAST_COST (µs of generator CPU per handshake, "-" on failure).
run_one() {
	local key=$1 round=$2 tool=$3 name="$1-r$2-$3" url="https://127.0.0.1:${PORT[$1]}/1k"
	local limit=$((DURATION + 30)) rc=0 parsed wall user sys cpu hs ok errs rate cost note="" extra=""
	local l1 t0 t1 flags=()
	l1=$(load1)
	t0=$(nginx_ticks)
	case $tool in
	loadlab*)
		case $tool in
		loadlab-fresh) flags=(--fresh-key-share) ;;
		loadlab-std) flags=(--tls-engine std) ;;
		esac
		timed "$limit" "$name" "${LOADLAB_RUN[@]}" gen --new-conn --insecure --close "$LOADLAB_CLOSE" -c "$CONNS" \
			-d "${DURATION}s" --cpus "$GEN_CPU" "${flags[@]}" --json "$TMP/$name.json" -q "$url" || rc=$?
		;;
	h2load)
		limit=$((3 * DURATION + 30))
		timed "$limit" "$name" h2load --h1 -t 1 -c "$CONNS" -n "${H2N[$key]}" "$url" || rc=$?
		;;
	bombardier)
		timed "$limit" "$name" "$GOTOOLS/bombardier" -c "$CONNS" -d "${DURATION}s" -t 10s -k \
			-H 'Connection: close' -p r -o j "$url" || rc=$?
		;;
	esac
	t1=$(nginx_ticks)
	cp "$TMP/$name".* "$LOGS/" 2>/dev/null || true
	if ((rc != 0)); then
		[[ $tool == h2load ]] && H2N[$key]=$(((H2N[$key] + 1) / 2))
		printf '%-7s r%-2s %-13s FAILED (exit %d%s): see %s/%s.err\n' "$key" "$round" "$tool" "$rc" \
			"$( ((rc == 124)) && echo ", killed after ${limit}s")" "$LOGS" "$name"
		printf '%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$key" "$round" "$tool" "$l1" >>"$RAW"
		LAST_COST=-
		return 0
	fi
	case $tool in
	loadlab*) parsed=$(parse_loadlab "$TMP/$name.json") ;;
	*) parsed=$(parse_"$tool" "$TMP/$name.out") ;;
	esac
	read -r wall user sys < <(time_fields "$name")
	read -r hs ok errs rate <<<"$parsed"
	cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
	cost=$(awk -v c="$cpu" -v n="$hs" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "-" }')
	local ncpu ncost nbusy
	ncpu=$(awk -v a="$t0" -v b="$t1" -v hz="$CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / hz }')
	ncost=$(awk -v c="$ncpu" -v n="$hs" 'BEGIN { if (n > 0) printf "%.1f", c * 1e6 / n; else print "-" }')
	nbusy=$(awk -v c="$ncpu" -v w="$wall" 'BEGIN { if (w > 0) printf "%.0f", 100 * c / w; else print "-" }')
	local twp=- busy=- tls=- bneck=-
	case $tool in
	loadlab*)
		read -r twp busy bneck tls < <(jq -r '"\(.generator.time_wait_peak) \(.generator.busy[0] // "-") \(.generator.bottleneck) \(.tls.version // "?")/\(.tls.curve // "?")/\(.tls.server_key // "?")/\(.tls.engine // "?")/\(.tls.client_key_share // "?")"' "$TMP/$name.json")
		extra="  loop busy $busy  bottleneck $bneck  time_wait_peak $twp  $tls"
		;;
	h2load)
		tls=$(awk '/^TLS Protocol:/ { v = $3 } /^Server Temp Key:/ { k = $4 } END { print v "/" k }' "$TMP/$name.out")
		extra="  -n ${H2N[$key]}  $tls"
		h2load_n "$key" "$rate"
		;;
	esac
	((errs > 0)) && note="  ($errs errors)"
	printf '%-7s r%-2s %-13s %7.0f hs/s  %7d hs  %6.2fs cpu (u %.2f s %.2f)  %7s us/hs  nginx %6s us/hs, core %3s%% busy%s%s\n' \
		"$key" "$round" "$tool" "$rate" "$hs" "$cpu" "$user" "$sys" "$cost" "$ncost" "$nbusy" "$note" "$extra"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$key" "$round" "$tool" "$wall" "$user" "$sys" "$cpu" "$hs" "$ok" "$errs" "$rate" "$cost" \
		"$ncpu" "$ncost" "$nbusy" "$bneck" "$twp" "$tls" "$l1" >>"$RAW"
	LAST_COST=$cost
}

# --- main --------------------------------------------------------------------
rm -rf "$LOGS"
mkdir -p "$LOGS"
printf 'key\tround\ttool\twall_s\tuser_s\tsys_s\tcpu_s\thandshakes\tok\terrors\trate\tus_per_hs\tnginx_cpu_s\tnginx_us_per_hs\tnginx_busy_pct\tbottleneck\ttime_wait_peak\ttls\tload1\n' >"$RAW"
machine_header
echo "# nginx $(nginx -v 2>&1 | sed 's/.*\///') ($(openssl version | awk '{print $1, $2}')), $(h2load --version | head -1), bombardier $BOMBARDIER_VERSION; TLS session cache/tickets off; loadlab --close $LOADLAB_CLOSE"
declare -A ROUND_RATIOS=()
for key in $KEYS; do
	url="https://127.0.0.1:${PORT[$key]}/1k"
	echo
	echo "== $key: new TLS connection per request, $CONNS connections, generator CPU µs per handshake"
	if [[ " ${TOOLS[*]} " == *" h2load "* ]]; then
		# Calibrate h2load -n (and warm nginx up): a short run of 4 requests per connection.
		cal=0
		timed 120 "$key-calibrate-h2load" h2load --h1 -t 1 -c "$CONNS" -n $((CONNS * 4)) "$url" || cal=$?
		if ((cal == 0)) && read -r _ _ _ crate < <(parse_h2load "$TMP/$key-calibrate-h2load.out"); then
			h2load_n "$key" "$crate"
		else
			h2load_n "$key" 100 # unknown: assume a slow server, h2load runs at most 3x DURATION anyway
		fi
	fi
	for ((r = 1; r <= ROUNDS; r++)); do
		declare -A cost=()
		while read -r t; do
			run_one "$key" "$r" "$t"
			cost[$t]=$LAST_COST
		done < <(rotate "$r" "${TOOLS[@]}")
		line=""
		for t in "${TOOLS[@]}"; do
			[[ $t == bombardier ]] && continue
			rr=$(ratio "${cost[$t]}" "${cost[bombardier]}")
			ROUND_RATIOS[$key/$t]+="$rr "
			line+="  $t/bombardier $rr"
		done
		printf '%-7s r%-2s ratio  %s\n' "$key" "$r" "$line"
		unset cost
	done
done

# --- summary -------------------------------------------------------------------
col() { awk -F'\t' -v k="$1" -v t="$2" -v c="$3" 'NR > 1 && $1 == k && $3 == t { print $c }' "$RAW"; }

echo
echo "== summary (medians over $ROUNDS rounds; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
printf 'key\ttool\truns\tmedian_rate\tmedian_us_per_hs\tratio_over_bombardier\tmedian_round_ratio\tmedian_nginx_us_per_hs\tmedian_nginx_busy_pct\tbottleneck_runs\ttarget\tverdict\n' >"$SUMMARY"
printf '%-7s %-13s %4s %9s %10s %9s %12s %12s %10s %6s %7s  %s\n' key tool runs "hs/s" "us/hs" "/bomb." "round-ratio" "nginx us/hs" "nginx busy" bneck target verdict
declare -A MRATE=()
for key in $KEYS; do
	b_cost=$(col "$key" bombardier 12 | median)
	for t in "${TOOLS[@]}"; do
		runs=$(col "$key" "$t" 12 | grep -cv '^-$' || true)
		mrate=$(col "$key" "$t" 11 | median)
		MRATE[$key/$t]=$mrate
		mcost=$(col "$key" "$t" 12 | median)
		ncost=$(col "$key" "$t" 14 | median)
		nbusy=$(col "$key" "$t" 15 | median)
		bneck=$(col "$key" "$t" 16 | grep -c '^true$' || true)
		[[ $t == loadlab* ]] || bneck=-
		rat=- rr=- tgt=- v=-
		if [[ $t != bombardier ]]; then
			rat=$(ratio "$mcost" "$b_cost")
			rr=$(tr ' ' '\n' <<<"${ROUND_RATIOS[$key/$t]}" | median)
			if [[ $t == loadlab ]]; then
				tgt=0.5
				v=$(verdict "$rat" "$tgt")
			fi
		fi
		printf '%-7s %-13s %4s %9.0f %10s %9s %12s %12s %9s%% %6s %7s  %s\n' "$key" "$t" "$runs" "${mrate/-/0}" "$mcost" "$rat" "$rr" "$ncost" "$nbusy" "$bneck" "$tgt" "$v"
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$key" "$t" "$runs" "$mrate" "$mcost" "$rat" "$rr" "$ncost" "$nbusy" "$bneck" "$tgt" "$v" >>"$SUMMARY"
	done
done
if [[ " $KEYS " == *" p256 "* && " $KEYS " == *" rsa4096 "* ]]; then
	echo
	echo "P-256 / RSA 4096 handshake-rate factor (median rates; nginx's one core is the limit unless the generator's is):"
	for t in "${TOOLS[@]}"; do
		f=$(ratio "${MRATE[p256/$t]}" "${MRATE[rsa4096/$t]}")
		printf '  %-13s %8.0f / %-6.0f = %sx\n' "$t" "${MRATE[p256/$t]/-/0}" "${MRATE[rsa4096/$t]/-/0}" "$f"
		printf 'p256/rsa4096\t%s\t-\t%s\t-\t-\t-\t-\t-\t-\t-\t-\n' "$t" "$f" >>"$SUMMARY"
	done
fi
echo
echo "/bomb. = median tool us/hs / median bombardier us/hs (lower is cheaper); the 0.5 target applies to loadlab (lean engine, key share reused)"
echo "nginx busy = nginx worker CPU / the tool's wall time; bneck = runs in which loadlab flagged itself as the bottleneck"
echo "wrote $RAW and $SUMMARY; tool logs in $LOGS"
