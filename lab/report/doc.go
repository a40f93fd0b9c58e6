// Package report turns results.json into DIR/report.md and an offline
// DIR/report.html: per scenario a main table shaped like the seeds' (proxy,
// rate found or achieved, p50, p95, p99, error %, proxy CPU, proxy memory
// under load, limited by; at most 10 columns, to fit a screen) and a detail
// table under it with the rest of each row (idle memory, page cache,
// knobs, generator verdict, backend CPU, headroom), one legend for the
// whole report, rankings that leave out rows where
// the generator was the bottleneck, scaling factors across CPU layouts,
// charts drawn with gonum.org/v1/plot and embedded as base64 PNG (latency
// percentile spectrum, achieved rate and p99 against offered rate across
// the search steps, per-second series of 2xx/s, non-2xx/s and TIME_WAIT),
// and findings in words that appear only when the measured numbers show
// the pattern (see findings.go for each rule and its thresholds).
// LiveHTML is the same page with a banner and a meta refresh on top, for
// the live page of `lab run --serve` (lab/live).
//
// Imports: gen, pin, internal/units, internal/atomicfile, lab/plan, lab/proxy, lab/results,
// lab/search and lab/spread, to read results.json; it starts nothing, so it
// must not import lab/scenario, lab/check or cmd.
package report
