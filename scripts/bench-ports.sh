#!/usr/bin/env bash
# bench-ports.sh: the full-size port-exhaustion check across veth (the unit
# test uses a 4,000-port range to stay fast). Two network namespaces joined by
# veth, `loadlab serve` in one, `loadlab gen --new-conn -n 30000` in the other
# with the default 28,232-port range, three ways:
#   one source address, fin close   -> expect errors.addr_not_avail > 0
#   four source addresses (--src-addrs) -> expect none
#   --close rst                      -> expect none, no TIME_WAIT on our side
# Each case gets fresh namespaces (TIME_WAIT lasts 60 s per namespace).
# Note: once half the range is in TIME_WAIT the kernel's port search in
# connect() slows sharply; on a 2-core machine the first case may not reach
# the full range within 60 s (the output shows the per-second rate).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-30000}
DURATION=${DURATION:-60s}
go build -o bin/loadlab ./cmd/loadlab
tag="llp$$"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null || true
  ip netns del "$tag-s" 2>/dev/null || true
  ip netns del "$tag-g" 2>/dev/null || true
}
trap cleanup EXIT

run_case() {
  local name=$1; shift
  cleanup; serve_pid=""
  ip netns add "$tag-s"; ip netns add "$tag-g"
  ip link add "${tag}s" type veth peer name "${tag}g"
  ip link set "${tag}s" netns "$tag-s"; ip link set "${tag}g" netns "$tag-g"
  ip -n "$tag-s" addr add 10.252.0.1/24 dev "${tag}s"
  for i in 2 3 4 5; do ip -n "$tag-g" addr add "10.252.0.$i/24" dev "${tag}g"; done
  for ns in "$tag-s" "$tag-g"; do ip -n "$ns" link set lo up; done
  ip -n "$tag-s" link set "${tag}s" up; ip -n "$tag-g" link set "${tag}g" up
  ip netns exec "$tag-s" bin/loadlab serve --listen 10.252.0.1:8080 2>/dev/null &
  serve_pid=$!
  sleep 1
  local out; out=$(mktemp)
  ip netns exec "$tag-g" bin/loadlab gen -q --new-conn -c 32 -n "$N" -d "$DURATION" --timeout 5s --json "$out" "$@" http://10.252.0.1:8080/1k
  python3 - "$name" "$out" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
r = json.load(open(path))
print(f"{name:34s} ok {r['ok']:6d}  addr_not_avail {r['errors']['addr_not_avail']:6d}  "
      f"time_wait_peak {r['generator']['time_wait_peak']:6d}  {r['handshake_rate']:7.0f} conn/s over {r['duration_s']:.0f} s")
PY
  rm -f "$out"
}

echo "port exhaustion across veth, $N new connections per case (load: $(cut -d' ' -f1-3 /proc/loadavg))"
run_case "one address, fin close"
run_case "four source addresses" --src-addrs 10.252.0.2-10.252.0.5
run_case "rst close" --close rst
