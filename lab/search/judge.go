package search

import (
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// Criteria decide whether a step passed (seed 002: p95 < 500 ms, p99 < 1 s,
// errors < 1%, at least 97% of the offered rate delivered).
type Criteria struct {
	P95         time.Duration
	P99         time.Duration
	MaxErrors   float64 // share of requests that failed or were not 2xx
	MinAchieved float64 // share of the offered rate delivered as 2xx (open loop only)
}

// Measure is what Judge needs from a generator result.
type Measure struct {
	Offered       float64 // requested rate; 0 = closed loop (no delivery check)
	Achieved      float64 // 2xx per second over the measured window
	Requests      uint64  // completed + failed in the measured window
	OK            uint64  // 2xx in the measured window
	P95us, P99us  int64   // corrected latency
	GenBottleneck bool    // the generator says it was the bottleneck
	GenReason     string
	Dropped       uint64 // requests the generator evicted unsent from its full queue (errors.dropped)
}

// MeasureOf extracts a Measure from a generator result.
func MeasureOf(r *result.Result) Measure {
	return Measure{
		Offered: r.RequestedRate, Achieved: r.AchievedRate,
		Requests: r.Requests, OK: r.OK,
		P95us: r.Latency.P95, P99us: r.Latency.P99,
		GenBottleneck: r.Generator.Bottleneck, GenReason: r.Generator.Reason,
		Dropped: r.Errors["dropped"],
	}
}

// observed is m as the generator's thresholds read it.
func (m Measure) observed() result.Observed {
	return result.Observed{Latency: result.Latency{P95: m.P95us, P99: m.P99us}, Requests: m.Requests, OK: m.OK,
		Offered: m.Offered, Achieved: m.Achieved}
}

// ErrorShare is the share of requests that failed or were not 2xx.
func (m Measure) ErrorShare() float64 { return m.observed().ErrorShare() }

// Thresholds returns the criteria as the generator's thresholds (what
// `loadlab gen --threshold` checks), so that a step and a CI run are judged
// one way: p95 and p99 below their limits, errors below MaxErrors (0 allows
// none), and at least MinAchieved of the offered rate delivered.
func (c Criteria) Thresholds() []result.Threshold {
	errs := result.Threshold{Metric: result.MetricErrors, Op: "<", Limit: c.MaxErrors, Share: true}
	if c.MaxErrors <= 0 {
		errs.Op, errs.Limit = "<=", 0
	}
	return []result.Threshold{
		{Metric: result.MetricP95, Op: "<", Limit: float64(c.P95.Microseconds())},
		{Metric: result.MetricP99, Op: "<", Limit: float64(c.P99.Microseconds())},
		errs,
		{Metric: result.MetricRate, Op: ">=", Limit: c.MinAchieved, Share: true},
	}
}

// Judge applies c to m (c's Thresholds, evaluated by the generator's own
// threshold check). Every failed criterion gives one reason. A step
// that fails only on latency or on the delivered rate while the generator
// reports itself as the bottleneck is GenLimited (a late generator inflates
// latency and sends less), with the generator's reason last. Errors (failed
// or non-2xx responses) and a window without any response are the proxy's
// failure whatever the generator says: a late sender does not make a proxy
// answer 502 or not at all. Requests the generator dropped unsent are its
// own failure when it reports itself as the bottleneck; what the proxy
// failed is the rest.
func Judge(c Criteria, m Measure) Judgment {
	var reasons []string
	proxyFault := false
	if m.Requests == 0 {
		reasons = append(reasons, "no responses in the measured window")
		proxyFault = true
	} else {
		o := m.observed()
		for _, t := range c.Thresholds() {
			r := t.Check(o)
			if r.Pass {
				continue
			}
			reasons = append(reasons, r.Reason)
			if t.Metric != result.MetricErrors {
				continue
			}
			bad := m.Requests - min(m.OK, m.Requests)
			own := o
			own.OK += min(m.Dropped, bad) // the proxy's share: without the requests dropped unsent
			if !m.GenBottleneck || !t.Check(own).Pass {
				proxyFault = true
			}
		}
	}
	if len(reasons) == 0 {
		return Judgment{Verdict: Pass}
	}
	if m.GenBottleneck && !proxyFault {
		r := "generator was the bottleneck"
		if m.GenReason != "" {
			r += ": " + m.GenReason
		}
		return Judgment{Verdict: GenLimited, Reasons: append(reasons, r)}
	}
	return Judgment{Verdict: Fail, Reasons: reasons}
}
