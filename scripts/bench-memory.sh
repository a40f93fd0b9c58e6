#!/usr/bin/env bash
# Generator memory with 10,000 keep-alive connections for a full run:
#   scripts/bench-memory.sh [DURATION]     (default 60s)
# Runs TestGenMemory10k (cmd/loadlab) with LOADLAB_MEM_DURATION: loadlab gen
# runs as its own process against a minimal server in the test process; the
# test samples the generator's RSS from /proc every 250 ms and fails if the
# peak (VmHWM) exceeds 100 MB or RSS grows by more than 8 MB from the 10 s
# sample to the end. Needs ulimit -n >= 10200.
set -euo pipefail
cd "$(dirname "$0")/.."

dur="${1:-60s}"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 10200 ]; then
	echo "bench-memory.sh: ulimit -n is $(ulimit -n); raise it to at least 10200 (ulimit -n 20000)" >&2
	exit 2
fi
LOADLAB_MEM_DURATION="$dur" exec go test ./cmd/loadlab -run '^TestGenMemory10k$' -count=1 -v -timeout 30m
