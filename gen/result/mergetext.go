package result

import (
	"fmt"
	"time"
)

// writeShardLine prints, for one shard of a run, which shard it was and
// when its schedule started.
func (r *Result) writeShardLine(p func(string, ...any)) {
	if r.Shard == nil || r.Shard.Count <= 1 {
		return
	}
	p("  shard     %d/%d%s", r.Shard.Index, r.Shard.Count, onHost(r.Host))
	if r.Schedule != nil {
		p(", schedule start %s", r.Schedule.Start.UTC().Format(time.RFC3339Nano))
	}
	p("\n")
}

// writeShardTable prints a merged result's shards, each with its own
// numbers and generator verdict.
func (r *Result) writeShardTable(p func(string, ...any)) {
	if len(r.Shards) == 0 {
		return
	}
	skew := ""
	if s := r.Schedule; s != nil {
		skew = fmt.Sprintf(", schedule start %s", s.Start.UTC().Format(time.RFC3339Nano))
		if s.StartSkewMs > 0 {
			skew += fmt.Sprintf(" (shards %.3f ms apart)", s.StartSkewMs)
		}
	}
	p("\n  merged %d shards%s\n", len(r.Shards), skew)
	p("  %-7s %-20s %10s %10s %10s %10s  %s\n", "shard", "host", "requests", "2xx/s", "p99", "max", "generator")
	for _, s := range r.Shards {
		verdict := "ok"
		if s.Generator.Bottleneck {
			verdict = "BOTTLENECK: " + s.Generator.Reason
		}
		host := s.Host
		if host == "" {
			host = s.Source
		}
		p("  %-7s %-20s %10d %10s %10s %10s  %s\n", fmt.Sprintf("%d/%d", s.Shard.Index, s.Shard.Count), orDash(host),
			s.Requests, fmtFloat(s.AchievedRate), fmtUs(s.Latency.P99), fmtUs(s.Latency.Max), verdict)
	}
}

// writeLogText prints a result read from HdrHistogram logs, which hold
// corrected latency alone, and reports whether r was one.
func (r *Result) writeLogText(p func(string, ...any)) bool {
	if r.Target != "" || r.Mode != "" {
		return false
	}
	c := r.Latency
	p("%d HdrHistogram logs: corrected latency only, %d values over %d seconds\n", len(r.Shards), r.Requests, len(r.Seconds))
	p("  p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n", fmtUs(c.P50), fmtUs(c.P90), fmtUs(c.P99), fmtUs(c.P999), fmtUs(c.Max), fmtUs(int64(c.Mean)))
	for _, s := range r.Shards {
		p("  from %s\n", s.Source)
	}
	return true
}
