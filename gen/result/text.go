package result

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/loadlab/loadlab/internal/fields"
	"github.com/loadlab/loadlab/internal/units"
)

// WriteText prints r for people: rates, corrected and uncorrected latency
// side by side, status codes, errors, bytes and the generator's verdict.
func (r *Result) WriteText(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if r.writeLogText(p) {
		return
	}
	rate := "closed loop"
	if r.Mode == "open" {
		rate = fmt.Sprintf("open loop at %s req/s", fmtFloat(r.RequestedRate))
	}
	if len(r.Stages) > 0 {
		rate = fmt.Sprintf("open loop, stages %s (mean offered %s req/s)", fmtStages(r.Stages), fmtFloat(r.RequestedRate))
	}
	conns := fmt.Sprintf("%d connections", r.Connections)
	if r.Streams > 0 {
		conns += fmt.Sprintf(" x %d streams", r.Streams)
	}
	p("%s  %s, %s, %s\n", r.Target, rate, conns, r.Protocol)
	p("  measured %.1fs (after %.1fs warmup)%s\n", r.DurationS, r.WarmupS, map[bool]string{true: "  [INTERRUPTED: partial result]", false: ""}[r.Interrupted])
	r.writeShardLine(p)
	achieved := fmtFloat(r.AchievedRate) + " req/s (2xx)"
	if r.Mode == "open" && r.RequestedRate > 0 {
		achieved += fmt.Sprintf(", %.1f%% of requested", 100*r.AchievedRate/r.RequestedRate)
	}
	p("  achieved  %s\n", achieved)
	p("  requests  %d, ok %d, non-2xx %d, errors %d", r.Requests, r.OK, r.nonOK(), r.ErrorCount())
	if r.Retries > 0 {
		p(", retried %d", r.Retries)
	}
	p("\n\n  latency        corrected   corrected 2xx   uncorrected\n")
	row := func(name string, a, b, c int64) { p("  %-8s %12s  %14s  %12s\n", name, fmtUs(a), fmtUs(b), fmtUs(c)) }
	c, k, u := r.Latency, r.Latency2xx, r.LatencyUncorrected
	row("p50", c.P50, k.P50, u.P50)
	row("p90", c.P90, k.P90, u.P90)
	row("p95", c.P95, k.P95, u.P95)
	row("p99", c.P99, k.P99, u.P99)
	row("p99.9", c.P999, k.P999, u.P999)
	row("max", c.Max, k.Max, u.Max)
	row("mean", int64(c.Mean), int64(k.Mean), int64(u.Mean))
	p("  (corrected: from each request's intended time, failures at the time they were given up)\n")
	if r.Mode == "closed" {
		p("  (closed loop: each request is sent when the previous one completes, so corrected = uncorrected apart from connect time)\n")
	}
	p("\n  status    %s\n", fmtCounts(r.Status))
	errs := map[string]uint64{}
	for k, v := range r.Errors {
		if v > 0 {
			errs[k] = v
		}
	}
	if len(errs) == 0 {
		p("  errors    none\n")
	} else {
		p("  errors    %s\n", fmtCounts(errs))
		keys := sortedKeys(errs)
		for _, k := range keys {
			if s, ok := r.ErrorSamples[k]; ok {
				if !strings.HasPrefix(s, k+": ") { // "tls: tls: ..." says it twice
					s = k + ": " + s
				}
				p("            %s\n", s)
			}
		}
	}
	r.writeTargets(p)
	p("  read      %s, %.3f Gbit/s\n", fmtBytes(r.BytesRead), r.ThroughputGbps)
	if r.HandshakeUs != nil {
		h := r.HandshakeUs
		p("  handshakes %d (%s/s), p50 %s p90 %s p99 %s max %s\n", r.Handshakes, fmtFloat(r.HandshakeRate), fmtUs(h.P50), fmtUs(h.P90), fmtUs(h.P99), fmtUs(h.Max))
	}
	if t := r.TLS; t != nil {
		p("  tls       %s %s, group %s, server key %s, resumed %d", t.Version, t.Cipher, orDash(t.Curve), orDash(t.ServerKey), t.Resumed)
		if t.ZeroRTT > 0 {
			p(", 0-RTT %d", t.ZeroRTT)
		}
		p("\n")
	}
	if r.QUICVersion != "" {
		p("  quic      %s\n", r.QUICVersion)
	}
	if h := r.H2; h != nil {
		p("  h2        goaways %d, refused and resent %d", h.GoAways, h.Refused)
		if len(h.GoAwayCodes) > 0 {
			p(" (goaway %s)", fmtCounts(h.GoAwayCodes))
		}
		if len(h.ResetCodes) > 0 {
			p(", stream resets %s", fmtCounts(h.ResetCodes))
		}
		if h.ServerMaxStreams > 0 {
			p(", server max streams %d", h.ServerMaxStreams)
		}
		p("\n")
	}
	r.writeShardTable(p)
	g := r.Generator
	busy := make([]string, len(g.Busy))
	for i, b := range g.Busy {
		st := 0.0
		if i < len(g.Starved) {
			st = g.Starved[i]
		}
		busy[i] = fmt.Sprintf("cpu%d busy %.0f%% starved %.0f%%", g.CPUs[i], b*100, st*100)
		if i < len(g.Idle) {
			busy[i] += fmt.Sprintf(" idle %.0f%%", g.Idle[i]*100)
		}
	}
	p("\n  generator %d loops (%s)", g.Loops, strings.Join(busy, ", "))
	if r.Mode == "open" {
		p(", send lag p50 %s p95 %s p99 %s p99.9 %s max %s, late sends %d, dropped %d", fmtUs(g.LagP50us), fmtUs(g.LagP95us), fmtUs(g.LagP99us), fmtUs(g.LagP999us), fmtUs(g.LagMaxus), g.LateSends, g.Dropped)
	}
	if g.TimeWaitPeak > 0 {
		p(", TIME_WAIT peak %d", g.TimeWaitPeak)
	}
	if g.Unfinished > 0 {
		p(", unfinished %d", g.Unfinished)
	}
	p("\n")
	for _, n := range g.Notes {
		p("  note      %s\n", n)
	}
	for _, c := range g.LagCaveats {
		p("  caveat    %s: send lag %s is %.0f%% of the corrected %s %s: at %s and above the latency includes the generator's lateness (the quantiles up to p99 do not)\n", c.Quantile, fmtUs(c.LagUs), 100*c.Share, c.Quantile, fmtUs(c.LatencyUs), c.Quantile)
	}
	if g.Bottleneck {
		p("  WARNING   the generator may have been the bottleneck: %s\n", g.Reason)
	} else {
		p("  verdict   the generator was not the bottleneck\n")
	}
	r.writeThresholds(p)
}

// writeTargets prints each target's counts and corrected latency.
func (r *Result) writeTargets(p func(string, ...any)) {
	if len(r.Targets) == 0 {
		return
	}
	p("  targets   %-40s %9s %9s %8s %7s %10s %10s\n", "", "requests", "ok", "non-2xx", "errors", "p50", "p99")
	for _, t := range r.Targets {
		name := t.Method + " " + t.URL
		if t.Weight > 0 {
			name = fmt.Sprintf("%s (x%d)", name, t.Weight)
		}
		p("            %-40s %9d %9d %8d %7d %10s %10s\n", units.Clip(name, 60), t.Requests, t.OK, t.Non2xx, t.Errors, fmtUs(t.Latency.P50), fmtUs(t.Latency.P99))
	}
}

// writeThresholds prints each threshold with its observed value: pass, or
// FAIL and why.
func (r *Result) writeThresholds(p func(string, ...any)) {
	if len(r.Thresholds) == 0 {
		return
	}
	p("\n  thresholds\n")
	for _, t := range r.Thresholds {
		switch {
		case t.Pass && t.Reason != "":
			p("    pass  %-16s %s\n", t.Threshold, t.Reason)
		case t.Pass:
			p("    pass  %-16s %s\n", t.Threshold, t.shown())
		default:
			p("    FAIL  %-16s %s\n", t.Threshold, t.Reason)
		}
	}
}

// shown writes the observed value in the threshold's unit.
func (t ThresholdResult) shown() string {
	th, err := ParseThreshold(t.Threshold)
	switch {
	case err != nil:
		return strconv.FormatFloat(t.Value, 'g', 6, 64)
	case th.Metric.latency():
		return t.Metric + " " + fmtUs(int64(t.Value))
	case th.Share:
		return fmt.Sprintf("%s %.2f%%", t.Metric, 100*t.Value)
	case th.Metric == MetricRate:
		return t.Metric + " " + units.Rate(t.Value) + "/s"
	}
	return t.Metric + " " + units.Int(int64(t.Value))
}

func (r *Result) nonOK() uint64 {
	var n uint64
	for k, v := range r.Status {
		if len(k) == 3 && k[0] != '2' {
			n += v
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fmtCounts(m map[string]uint64) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+strconv.FormatUint(m[k], 10))
	}
	return strings.Join(parts, " ")
}

func fmtFloat(f float64) string {
	if f >= 100 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

// fmtUs and fmtBytes are the project's one latency and size format.
var (
	fmtUs    = units.Micros
	fmtBytes = units.Bytes
)

// fmtStages writes recorded stages as --stages reads them.
func fmtStages(st []StageInfo) string {
	parts := make([]string, len(st))
	for i, s := range st {
		parts[i] = fmtSeconds(s.DurationS) + ":" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return orNone(strings.Join(parts, ","))
}

// sameTargets reports whether two results ran the same targets.

// orNone is s, or "(none)" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// fmtSeconds writes seconds as a Go duration string reads them.
func fmtSeconds(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + "s" }

// Words rewrites the generator's notes of r (generator.io_note,
// generator.notes, and each merged shard's) with name(field) for every
// Config field they name as {Field}; nil writes the field names. A library
// result names Config fields; the CLI passes its flags, the lab nil. Call
// it once, before writing r: the marks are gone afterwards.
func (r *Result) Words(name func(field string) string) {
	r.Generator.words(name)
	for i := range r.Shards {
		r.Shards[i].Generator.words(name)
	}
}

func (g *Generator) words(name func(field string) string) {
	g.IONote = fields.Words(g.IONote, name)
	for i, n := range g.Notes {
		g.Notes[i] = fields.Words(n, name)
	}
}
