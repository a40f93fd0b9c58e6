package gen

import (
	"fmt"
	"strings"
)

// The self-check: was the generator the bottleneck?
//
// It is, when either holds:
//
//  1. A loop had no time to spare: busy + starved above BusyLimit (90%) of
//     its wall time over the measured window. busy is the loop thread's own
//     CPU time; starved is the time it was runnable but not running (another
//     task had its CPU), plus its CPU's softirq and steal time (see
//     account.go). HTTP/3 judges each CPU of the run the same way, from all
//     of the process's threads that ran there.
//  2. Open loop: the generator's own lateness is a material part of the
//     latency it reports: at p50, p99 or p99.9, the send lag (how late a
//     wakeup came for the earliest due request) is above LagFloorUs (1 ms)
//     and above LagShare (10%) of the corrected latency at the same
//     quantile (lag beyond Config.PacingTolerance: the tolerance is
//     lateness the user asked for). A slow server makes the latency large, so lag that is small
//     beside it does not make the generator the bottleneck; a fast server
//     measured with a late generator does. A quantile is judged only when
//     at least LagTailSamples lag samples lie beyond it (p99.9 needs 10,000
//     wakeups): a percentile made of one or two samples is the run's single
//     worst wakeup, not the generator's behaviour. With fewer than 1,000
//     wakeups (p99 not judged) the highest quantile that still has that
//     many beyond it is judged too.
const (
	BusyLimit  = 0.90
	LagFloorUs = 1000
	LagShare   = 0.10
	// StarvedNotable is the starved share beyond which the reason says the
	// loop was starved rather than merely busy.
	StarvedNotable = 0.25
	LagTailSamples = 10
)

// verdict sets Bottleneck and Reason from the accounts (one per loop, or one
// per CPU for HTTP/3) and, in open loop, the lag against the latency.
func (g *Generator) verdict(shares []cpuShare, res *Result) {
	var reasons []string
	perCPU := res.Protocol == "h3"
	for i, s := range shares {
		if s.busy+s.starved() <= BusyLimit {
			continue
		}
		cpu := -1
		if i < len(g.CPUs) {
			cpu = g.CPUs[i]
		}
		who := fmt.Sprintf("loop %d (cpu %d)", i, cpu)
		if perCPU {
			who = fmt.Sprintf("cpu %d", cpu)
		}
		why := "give the generator more CPUs or lower the load"
		if s.starved() >= StarvedNotable {
			why = "it was starved: another task, softirqs or the hypervisor took its CPU; give the generator a CPU of its own"
		}
		reasons = append(reasons, fmt.Sprintf("%s had no time to spare: busy %.0f%% + starved %.0f%% (waiting to run %.0f%%, softirq %.0f%%, steal %.0f%%) of its wall time, limit %.0f%%: %s",
			who, 100*s.busy, 100*s.starved(), 100*s.wait, 100*s.softirq, 100*s.steal, 100*BusyLimit, why))
	}
	if res.Mode == "open" {
		lat := res.Latency
		type quantile struct {
			name     string
			tail     float64 // fraction of samples beyond the quantile
			lag, lat int64
		}
		qs := []quantile{{"p50", 0.5, g.LagP50us, lat.P50}, {"p99", 0.01, g.LagP99us, lat.P99}, {"p99.9", 0.001, g.LagP999us, lat.P999}}
		if n := float64(g.lagSamples); n*0.01 < LagTailSamples && n >= 2*LagTailSamples && g.lagHist != nil && res.CorrectedHist != nil {
			// Too few wakeups to judge p99 (a long pacing tick, a short
			// run): judge the highest quantile that still has
			// LagTailSamples beyond it.
			tail := LagTailSamples / n
			p := 100 * (1 - tail)
			qs = append(qs, quantile{fmt.Sprintf("p%.3g", p), tail, g.lagHist.ValueAtQuantile(p), res.CorrectedHist.ValueAtQuantile(p)})
		}
		for _, q := range qs {
			if float64(g.lagSamples)*q.tail < LagTailSamples-1e-9 {
				continue
			}
			// The pacing tolerance is lateness the user chose; only what
			// comes on top of it is the generator's failing.
			beyond := q.lag - g.PacingToleranceUs
			if beyond > LagFloorUs && float64(beyond) > LagShare*float64(q.lat) {
				tol := ""
				if g.PacingToleranceUs > 0 {
					tol = fmt.Sprintf(" (%s beyond the pacing tolerance %s)", fmtUs(beyond), fmtUs(g.PacingToleranceUs))
				}
				reasons = append(reasons, fmt.Sprintf("send lag %s %s%s is %.0f%% of the corrected %s %s (limits: %s and %.0f%%): the generator's own lateness is a material part of the latency it reports",
					q.name, fmtUs(q.lag), tol, 100*float64(beyond)/float64(max(q.lat, 1)), q.name, fmtUs(q.lat), fmtUs(LagFloorUs), 100*LagShare))
				break
			}
		}
	}
	g.Bottleneck = len(reasons) > 0
	g.Reason = strings.Join(reasons, "; ")
}
