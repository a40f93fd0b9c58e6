#!/usr/bin/env bash
# watch-prometheus.sh: a gen run watched in a real Prometheus while it goes,
# and its numbers set beside results.json at the end.
#
# Starts, on loopback only and each by its own PID: `loadlab serve` (pinned
# to SERVER_CPU), Prometheus (Debian's `prometheus`, a 1 s scrape interval,
# its own data directory under a temp dir) scraping `loadlab gen
# --metrics-addr`, and the gen run itself (pinned to GEN_CPU): an open loop
# at RATE req/s for DURATION seconds over CONNS connections, GET /1k.
# While the run goes it prints, every PRINT_EVERY seconds, what the three
# README queries answer (achieved rate, p99 from the histogram, errors by
# class). At the end it prints each final counter from Prometheus beside
# results.json's number, increase() over the run, and histogram_quantile's
# p50/p99 beside the result's corrected percentiles.
#
# Environment: DURATION=120 RATE=2000 CONNS=50 SERVER_CPU=0 GEN_CPU=1
#   PRINT_EVERY=20 OUT=results/watch (results.json and the query log)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/lib/bench-common.sh"

RATE=${RATE:-2000}
DURATION=${DURATION:-120}
PRINT_EVERY=${PRINT_EVERY:-20}
OUT=${OUT:-$RESULTS/watch}
for v in RATE CONNS DURATION PRINT_EVERY; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number (got '${!v}')"
done
((DURATION >= 10 && DURATION <= 600)) || die "DURATION must be 10-600 seconds"
((PRINT_EVERY >= 1)) || die "PRINT_EVERY must be at least 1"
for tool in prometheus curl jq taskset; do
	command -v "$tool" >/dev/null || die "needs $tool (apt-get install prometheus curl jq util-linux)"
done
build_loadlab

PIDS=()
TMP=$(mktemp -d /tmp/loadlab-watch.XXXXXX)
stop_all() {
	local rc=$? p
	trap - EXIT INT TERM
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$TMP"
	exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$OUT"

wait_http() { # URL: up to 15 s
	local i
	for ((i = 0; i < 150; i++)); do
		curl -fs -o /dev/null "$1" && return 0
		sleep 0.1
	done
	die "$1 did not answer within 15 s"
}

SPORT=$(free_port)
taskset -c "$SERVER_CPU" "$LOADLAB" serve --listen "127.0.0.1:$SPORT" >"$TMP/serve.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$SPORT/1k"

MPORT=$(free_port)
PPORT=$(free_port)
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
  evaluation_interval: 1s
scrape_configs:
  - job_name: loadlab
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/data" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn >"$TMP/prometheus.log" 2>&1 &
PIDS+=($!)
wait_http "http://127.0.0.1:$PPORT/-/ready"

# query EXPR: the instant vector's values, "label=value ... value" per series.
query() {
	curl -fsG "http://127.0.0.1:$PPORT/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[] | ([.metric | to_entries[] | select(.key != "__name__" and .key != "instance" and .key != "job" and .key != "run") | "\(.key)=\(.value)"] | join(" ")) + " " + .value[1]'
}
one() { query "$1" | awk 'NF { v = $NF } END { if (v == "") print "-"; else printf "%.10g\n", v }'; }

RUN_LABEL=watch-$(date -u +%Y%m%dT%H%M%SZ)
taskset -c "$GEN_CPU" "$LOADLAB" gen -q -r "$RATE" -c "$CONNS" -d "${DURATION}s" \
	--metrics-addr "127.0.0.1:$MPORT" --metrics-linger 5s --metrics-label "run=$RUN_LABEL" \
	--json "$OUT/results.json" "http://127.0.0.1:$SPORT/1k" >"$TMP/gen.log" 2>&1 &
GEN=$!
PIDS+=("$GEN")
LOG=$OUT/queries.txt
{
	echo "# loadlab gen -r $RATE -c $CONNS -d ${DURATION}s, scraped by Prometheus every 1 s (run=$RUN_LABEL)"
	printf '%-8s %14s %12s %s\n' "t (s)" "rate (2xx/s)" "p99 (ms)" "errors/s by class"
} | tee "$LOG"
start=$(date +%s)
while kill -0 "$GEN" 2>/dev/null && (($(date +%s) - start < DURATION + 30)); do
	sleep "$PRINT_EVERY"
	kill -0 "$GEN" 2>/dev/null || break
	r=$(one 'rate(loadlab_gen_ok_total[10s])')
	p=$(one 'histogram_quantile(0.99, sum by (le) (rate(loadlab_gen_latency_seconds_bucket[30s]))) * 1000')
	e=$(query 'sum by (class) (rate(loadlab_gen_errors_total[10s])) > 0' | tr '\n' ';')
	printf '%-8s %14.1f %12.3f %s\n' "$(($(date +%s) - start))" "${r/-/0}" "${p/-/0}" "${e:-none}" | tee -a "$LOG"
done
wait "$GEN" || die "gen failed: $(tail -3 "$TMP/gen.log")"
PIDS=("${PIDS[@]:0:2}")
sleep 2 # one more scrape after the lingering endpoint's final values

R=$OUT/results.json
{
	echo
	echo "# final values: Prometheus beside results.json"
	printf '%-52s %14s %14s\n' "what" "Prometheus" "results.json"
	printf '%-52s %14s %14s\n' "loadlab_gen_requests_total" "$(one 'max_over_time(loadlab_gen_requests_total[5m])')" "$(jq .requests "$R")"
	printf '%-52s %14s %14s\n' "loadlab_gen_ok_total" "$(one 'max_over_time(loadlab_gen_ok_total[5m])')" "$(jq .ok "$R")"
	printf '%-52s %14s %14s\n' "sum(loadlab_gen_errors_total)" "$(one 'sum(max_over_time(loadlab_gen_errors_total[5m]))')" "$(jq '[.errors // {} | .[]] | add // 0' "$R")"
	printf '%-52s %14s %14s\n' "increase(loadlab_gen_ok_total[run])" "$(one "increase(loadlab_gen_ok_total[$((DURATION + 60))s])")" "$(jq .ok "$R")"
	for q in 0.5 0.99; do
		pct=${q#0.}; [[ $pct == 5 ]] && pct=50
		printf '%-52s %14s %14s\n' "histogram_quantile($q) over the run (ms)" \
			"$(one "histogram_quantile($q, max_over_time(loadlab_gen_latency_seconds_bucket[5m])) * 1000")" \
			"$(jq -r --arg p "p$pct" '.latency_us[$p] / 1000' "$R")"
	done
	printf '%-52s %14s %14s\n' "cpu_share busy (final)" "$(one 'avg(last_over_time(loadlab_gen_cpu_share{state="busy"}[1m]))')" "$(jq -r '.generator.busy | add / length' "$R")"
} | tee -a "$LOG"
echo "watch-prometheus: results in $R, queries in $LOG" >&2
