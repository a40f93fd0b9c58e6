#!/usr/bin/env bash
# Runs every Fuzz* target of the module for N seconds each (default 10):
#   scripts/fuzz.sh [SECONDS]
# Targets are discovered with `go test -list '^Fuzz'`, so new ones are picked
# up without editing this script. A failing input is written by go test to
# the package's testdata/fuzz/<Target>/ directory: commit it as a regression
# seed once the bug is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-${FUZZ_SECONDS:-10}}"
case "$secs" in
'' | *[!0-9]*)
	echo "fuzz.sh: seconds must be a whole number (got '$secs')" >&2
	exit 2
	;;
esac

ran=0
for pkg in $(go list ./...); do
	# `go test -list` prints the matching names, then "ok <pkg> ..." (or
	# "? <pkg> [no test files]"): keep only the names.
	targets=$(go test -list '^Fuzz' "$pkg" | grep -E '^Fuzz[A-Za-z0-9_]*$' || true)
	for t in $targets; do
		echo "== fuzz $pkg $t for ${secs}s"
		# Minimizing a new input can take up to a minute by default (one
		# seed is a 64 KiB header block): bound it to keep the time per
		# target close to SECONDS.
		go test "$pkg" -run '^$' -fuzz "^${t}\$" -fuzztime "${secs}s" -fuzzminimizetime 3s
		ran=$((ran + 1))
	done
done
if [ "$ran" -eq 0 ]; then
	echo "fuzz.sh: no Fuzz targets found" >&2
	exit 1
fi
echo "fuzz.sh: $ran targets fuzzed for ${secs}s each"
