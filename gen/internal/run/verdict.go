package run

import (
	"fmt"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
)

// The self-check: was the generator the bottleneck?
//
// It is, when either holds:
//
//  1. A loop had no time to spare: busy + starved above BusyLimit (90%) of
//     its wall time over the measured window. busy is the loop thread's own
//     CPU time; starved is the time it was runnable but not running (another
//     task, a softirq or the hypervisor had its CPU); idle, the rest, is the
//     time it slept: the three are disjoint and add up to 1 (account.go).
//     quic-go's HTTP/3 engine judges each CPU of the run the same way,
//     from all of the process's threads that ran there. A lean QUIC loop
//     (HTTP/3 on gen/quic) is also the bottleneck when it was starved for
//     StarvedNotable (25%) of its wall time or more, even with time to
//     spare: a QUIC client's ACKs wait while its loop waits, and the
//     server's congestion control and pacing slow down on late ACKs, so a
//     starved loop throttles the server's sending and then idles (TCP's
//     ACKs come from the kernel, not the loop).
//  2. Open loop: the generator's own lateness is a material part of the
//     latency it seconds at a quantile the results report and rank by (p50,
//     p95, p99: JudgedLagQuantiles): the send lag there (how late a wakeup
//     came for the earliest due request) is above LagFloorUs (1 ms) and
//     above LagShare (10%) of the corrected latency at the same quantile
//     (lag beyond Config.PacingTolerance: the tolerance is lateness the user
//     asked for). A slow server makes the latency large, so lag that is
//     small beside it does not make the generator the bottleneck; a fast
//     server measured with a late generator does. A quantile is judged only
//     when at least LagTailSamples lag samples lie beyond it: a percentile
//     made of one or two samples is the run's single worst wakeup, not the
//     generator's behaviour. With fewer than 1,000 wakeups (p99 not judged)
//     the highest quantile that still has that many beyond it is judged too.
//
// Lag that is material only above p99 (p99.9) does not change the numbers
// a row shows: it is a caveat on that quantile (LagCaveats), not a
// bottleneck.
//
// When the lag rule fires, the run measures how late this machine wakes a
// bare sleeping thread (wakefloor.go) and the reason says whether that
// explains the lag: the host's lateness, or the generator's own.
const (
	BusyLimit  = 0.90
	LagFloorUs = 1000
	LagShare   = 0.10
	// StarvedNotable is the starved share beyond which the reason says the
	// loop was starved rather than merely busy.
	StarvedNotable = 0.25
	LagTailSamples = 10
)

// JudgedLagQuantiles are the quantiles the lag rule judges: the ones the
// lab's tables report and rank by.
var JudgedLagQuantiles = []string{"p50", "p95", "p99"}

// material reports whether lag beyond the tolerance is a material part
// of the latency at q, and how much lag that is.
func (j *lagJudge) material(g *result.Generator, q lagQuantile) (bool, int64) {
	if float64(j.samples)*q.tail < LagTailSamples-1e-9 {
		return false, 0
	}
	beyond := q.lag - g.PacingToleranceUs
	return beyond > LagFloorUs && float64(beyond) > LagShare*float64(q.lat), beyond
}

// verdict sets g's Bottleneck and Reason from the accounts (one per loop, or one
// per CPU for HTTP/3) and, in open loop, the lag against the latency.
func (j *lagJudge) verdict(g *result.Generator, shares []CPUShare, res *result.Result) {
	var reasons []string
	j.fired = nil
	perCPU := j.perCPU
	for i, s := range shares {
		busy, starved, idle := s.Split()
		starvedOnly := j.starvedLimits && starved >= StarvedNotable
		if busy+starved <= BusyLimit && !starvedOnly {
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
		if starved >= StarvedNotable {
			why = "it was starved: another task, softirqs or the hypervisor took its CPU; give the generator a CPU of its own"
		}
		if busy+starved <= BusyLimit {
			reasons = append(reasons, fmt.Sprintf("%s was starved %.0f%% of its wall time, limit %.0f%% for a QUIC loop (busy %.0f%%, idle %.0f%%; starved: runnable, waiting to run; its CPU's softirq %.0f%% and steal %.0f%%): its ACKs waited with it, and the server's congestion control slows down on late ACKs; give the generator a CPU of its own",
				who, 100*starved, 100*StarvedNotable, 100*busy, 100*idle, 100*s.softirq, 100*s.steal))
			continue
		}
		reasons = append(reasons, fmt.Sprintf("%s had no time to spare: busy %.0f%% + starved %.0f%% = %.0f%% of its wall time, limit %.0f%% (idle %.0f%%; starved: runnable, waiting to run; its CPU's softirq %.0f%% and steal %.0f%% fall inside busy or starved): %s",
			who, 100*busy, 100*starved, 100*(busy+starved), 100*BusyLimit, 100*idle, 100*s.softirq, 100*s.steal, why))
	}
	if res.Mode == "open" {
		lat := res.Latency
		lagP95 := int64(-1)
		if j.hist != nil {
			lagP95 = j.hist.ValueAtQuantile(95)
		}
		qs := []lagQuantile{{name: "p50", tail: 0.5, lag: g.LagP50us, lat: lat.P50}}
		if lagP95 >= 0 {
			qs = append(qs, lagQuantile{name: "p95", tail: 0.05, lag: lagP95, lat: lat.P95})
		}
		qs = append(qs, lagQuantile{name: "p99", tail: 0.01, lag: g.LagP99us, lat: lat.P99})
		if n := float64(j.samples); n*0.01 < LagTailSamples && n >= 2*LagTailSamples && j.hist != nil && res.CorrectedHist != nil {
			// Too few wakeups to judge p99 (a long pacing tick, a short
			// run): judge the highest quantile that still has
			// LagTailSamples beyond it.
			tail := LagTailSamples / n
			p := 100 * (1 - tail)
			qs = append(qs, lagQuantile{name: fmt.Sprintf("p%.3g", p), tail: tail, lag: j.hist.ValueAtQuantile(p), lat: res.CorrectedHist.ValueAtQuantile(p)})
		}
		judged := false
		for _, q := range qs {
			ok, beyond := j.material(g, q)
			if !ok {
				continue
			}
			tol := ""
			if g.PacingToleranceUs > 0 {
				tol = fmt.Sprintf(" (%s beyond the pacing tolerance %s)", units.Micros(beyond), units.Micros(g.PacingToleranceUs))
			}
			reasons = append(reasons, fmt.Sprintf("send lag %s %s%s is %.0f%% of the corrected %s %s (limits: %s and %.0f%%): the generator's own lateness is a material part of the latency it seconds",
				q.name, units.Micros(q.lag), tol, 100*float64(beyond)/float64(max(q.lat, 1)), q.name, units.Micros(q.lat), units.Micros(LagFloorUs), 100*LagShare))
			q.beyond = beyond
			j.fired = &q
			judged = true
			break
		}
		if !judged {
			// Above the judged quantiles: a caveat on that quantile.
			q := lagQuantile{name: "p99.9", tail: 0.001, lag: g.LagP999us, lat: lat.P999}
			if ok, beyond := j.material(g, q); ok {
				g.LagCaveats = append(g.LagCaveats, result.LagCaveat{Quantile: q.name, LagUs: beyond, LatencyUs: q.lat, Share: units.Round3(float64(beyond) / float64(max(q.lat, 1)))})
			}
		}
	}
	g.Bottleneck = len(reasons) > 0
	g.Reason = strings.Join(reasons, "; ")
}

// lagQuantile is one quantile the lag rule looks at.
type lagQuantile struct {
	name     string
	tail     float64 // fraction of samples beyond the quantile
	lag, lat int64
	beyond   int64 // lag beyond the pacing tolerance (set when judged material)
}

// lagJudge is the lag rule's working state in a run: the send-lag samples
// of every loop and the quantile the rule judged material (nil: none),
// which the wake floor is then judged at.
type lagJudge struct {
	samples int64          // wakeups the lag was sampled on
	hist    *hdr.Histogram // their distribution
	fired   *lagQuantile

	// Set by the run's outcome before verdict: the shares are one per CPU
	// (quic-go's HTTP/3 engine), and starvation alone limits the run (the
	// lean QUIC loops: see rule 1).
	perCPU, starvedLimits bool
}
