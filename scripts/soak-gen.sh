#!/usr/bin/env bash
# Generator memory over a long open-loop run (a benchmark, not a test):
#   scripts/soak-gen.sh [DURATION] [RATE]        (default 10m, 10000 req/s)
# Starts `loadlab serve` on 127.0.0.1 (SERVER_CPU, default 0), runs
#   loadlab gen --rate RATE -c 50 -d DURATION --json F --hdr-log F.hlog
# on GEN_CPU (default 1), samples the generator's RSS (VmRSS) every 10 s and
# prints it at 1, 5 and 10 minutes (the 10-minute sample is the end of the
# run, while the result is built), the growth per hour while the run goes
# on (from 1 minute to 20 s before the end), the sizes of the JSON and the
# .hlog, and the load average (the machine may be shared: read figures with
# it).
# The binary is built with -tags soakprof (cmd/loadlab/soakprof.go), which
# writes heap profiles at 1 and 10 minutes (LOADLAB_HEAP_PROFILE_AT to
# change) into OUT, and every minute the live heap after a GC (heap.tsv),
# printed beside the RSS.
# Environment: OUT=results/soak-TIMESTAMP  LOADLAB=prebuilt binary.
set -euo pipefail
cd "$(dirname "$0")/.."

dur="${1:-10m}"
rate="${2:-10000}"
SERVER_CPU=${SERVER_CPU:-0}
GEN_CPU=${GEN_CPU:-1}
OUT=${OUT:-results/soak-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
if [[ -z ${LOADLAB:-} ]]; then
	LOADLAB=$OUT/loadlab
	go build -tags soakprof -o "$LOADLAB" ./cmd/loadlab
fi
case $dur in
*h) secs=$((${dur%h} * 3600)) ;;
*m) secs=$((${dur%m} * 60)) ;;
*s) secs=${dur%s} ;;
*) echo "soak-gen.sh: DURATION like 90s, 10m or 1h (got $dur)" >&2; exit 2 ;;
esac

SERVE_PID="" GEN_PID=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	for p in $GEN_PID $SERVE_PID; do
		if kill -0 "$p" 2>/dev/null; then kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
	done
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A free port: the server picks it (port 0) and prints it.
"$LOADLAB" serve --listen 127.0.0.1:0 --cpus "$SERVER_CPU" >"$OUT/serve.log" 2>&1 &
SERVE_PID=$!
addr=""
for _ in $(seq 100); do
	addr=$(grep -oE '127\.0\.0\.1:[0-9]+' "$OUT/serve.log" | head -1 || true)
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n $addr ]] || { echo "soak-gen.sh: serve did not say its address:" >&2; cat "$OUT/serve.log" >&2; exit 1; }

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
LOADLAB_HEAP_PROFILE="$OUT/heap" LOADLAB_HEAP_PROFILE_AT="${LOADLAB_HEAP_PROFILE_AT:-1m,10m}" LOADLAB_HEAP_LOG="$OUT/heap.tsv" \
	"$LOADLAB" gen --quiet --cpus "$GEN_CPU" --rate "$rate" -c 50 -d "$dur" --timeout 2s \
	--json "$OUT/gen.json" --hdr-log "$OUT/gen.hlog" "http://$addr/1k" 2>"$OUT/gen.log" &
GEN_PID=$!
start=$(date +%s)
: >"$OUT/rss.tsv"
while kill -0 "$GEN_PID" 2>/dev/null; do
	t=$(($(date +%s) - start))
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$GEN_PID/status" 2>/dev/null || true)
	[[ -n $rss ]] && printf '%d\t%d\t%s\n' "$t" "$rss" "$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/rss.tsv"
	sleep 10
	((t > secs + 60)) && break
done
rc=0
wait "$GEN_PID" || rc=$?
GEN_PID=""
echo "gen exit $rc; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# RSS at the sample nearest each mark (kB -> MB).
at() { awk -v m="$1" 'BEGIN{best=-1} {d=$1-m; if(d<0)d=-d; if(best<0||d<best){best=d; v=$2; tt=$1}} END{if(best>=0 && best<=15) printf "RSS at %4ds: %6.1f MB\n", tt, v/1024}' "$OUT/rss.tsv"; }
for m in 60 300 600 1800 3600; do ((m <= secs)) && at "$m"; done
# The slope is a least-squares fit over every sample in that stretch.
slope='{n++; sx+=$1; sy+=$2; sxx+=$1*$1; sxy+=$1*$2; if (a=="") a=$1; e=$1} END {if (n>2 && e>a) printf "%s growth %.2f MB/hour (least squares over %d samples, %ds to %ds)\n", what, (n*sxy-sx*sy)/(n*sxx-sx*sx)*3600/scale, n, a, e}'
# Live heap after a GC, from the soakprof build's log (bytes -> MB).
if [[ -s $OUT/heap.tsv ]]; then
	awk '$1==60 || $1==300 || $1==600 || $1==1800 || $1==3600 {printf "live heap at %4ds: %6.2f MB (heap sys %.1f MB, Go sys %.1f MB)\n", $1, $2/1e6, $3/1e6, $4/1e6}' "$OUT/heap.tsv"
	awk -v what="live heap" -v scale=1e6 -v end="$secs" '$1<end '"$slope" "$OUT/heap.tsv"
fi
# Growth while the generator runs: from 1 minute to 20 s before the end
# (the last seconds build the result: the histograms read back, the JSON).
awk -v what=RSS -v scale=1024 -v end=$((secs - 20)) '$1>=60 && $1<=end '"$slope" "$OUT/rss.tsv"
grep -oE '"(achieved_rate|requests|ok)": *[0-9.]+' "$OUT/gen.json" 2>/dev/null | head -3 | tr '\n' ' ' | sed 's/^/result: /; s/ $/\n/'
printf 'JSON %s bytes, .hlog %s bytes\n' "$(stat -c %s "$OUT/gen.json" 2>/dev/null || echo 0)" "$(stat -c %s "$OUT/gen.hlog" 2>/dev/null || echo 0)"
ls "$OUT"/heap-*.pprof 2>/dev/null | sed 's/^/heap profile: /' || true
exit "$rc"
