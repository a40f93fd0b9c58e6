#!/usr/bin/env bash
# Runs every Fuzz* target of the module for N seconds each (default 10):
#   scripts/fuzz.sh [SECONDS]
# Targets are found by their declarations (`func FuzzX(f *testing.F)` in a
# package's _test.go files), so new ones are picked up without editing this
# script. Each package's instrumented test binary is built once (go test -c
# -fuzz) and run once per target, as go test -fuzz would run it: from the
# package's directory, with Go's fuzz cache. A failing input is written to
# the package's testdata/fuzz/<Target>/ directory: commit it as a
# regression seed once the bug is fixed.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-${FUZZ_SECONDS:-10}}"
case "$secs" in
'' | *[!0-9]*)
	echo "fuzz.sh: seconds must be a whole number (got '$secs')" >&2
	exit 2
	;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/log"
fuzzcache="$(go env GOCACHE)/fuzz"

# fuzz_one PKG DIR BIN TARGET fuzzes TARGET for $secs seconds. A failing
# input always fails the run. Go 1.26's fuzzing coordinator can also fail a
# target with a bare "context deadline exceeded" as -fuzztime runs out
# while a worker is mid-call (golang/go#75804, fixed in Go 1.27): no input
# is written then. That signature alone runs the target again, twice at
# most.
fuzz_one() {
	local pkg=$1 dir=$2 bin=$3 t=$4 corpus before after rc try
	corpus="$dir/testdata/fuzz/$t"
	for try in 1 2 3; do
		echo "== fuzz $pkg $t for ${secs}s"
		before=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
		rc=0
		# Minimizing a new input can take up to a minute by default (one
		# seed is a 64 KiB header block): bound it to keep the time per
		# target close to SECONDS.
		(cd "$dir" && "$bin" -test.paniconexit0 -test.run '^$' -test.fuzz "^${t}\$" \
			-test.fuzztime "${secs}s" -test.fuzzminimizetime 3s \
			-test.fuzzcachedir "$fuzzcache/$pkg") 2>&1 | tee "$log" || rc=$?
		((rc == 0)) && return 0
		after=$( (ls "$corpus" 2>/dev/null || true) | wc -l)
		if ((try < 3)) && [ "$after" -eq "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
			! grep -q 'Failing input written' "$log"; then
			echo "fuzz.sh: $t stopped on Go's fuzztime deadline race (golang/go#75804; no failing input written): again"
			continue
		fi
		echo "FAIL $pkg $t" >&2
		return "$rc"
	done
}

ran=0
while read -r pkg dir; do
	targets=$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*\*testing\.F).*/\1/p' "$dir"/*_test.go 2>/dev/null || true)
	[ -n "$targets" ] || continue
	bin="$work/$(echo "$pkg" | tr / _).test"
	echo "== build $pkg (instrumented for fuzzing)"
	go test -c -fuzz . -o "$bin" "$pkg"
	for t in $targets; do
		fuzz_one "$pkg" "$dir" "$bin" "$t"
		ran=$((ran + 1))
	done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)
if [ "$ran" -eq 0 ]; then
	echo "fuzz.sh: no Fuzz targets found" >&2
	exit 1
fi
echo "fuzz.sh: $ran targets fuzzed for ${secs}s each"
