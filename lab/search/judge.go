package search

import (
	"fmt"
	"github.com/loadlab/loadlab/internal/units"
	"time"

	"github.com/loadlab/loadlab/gen"
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
func MeasureOf(r *gen.Result) Measure {
	return Measure{
		Offered: r.RequestedRate, Achieved: r.AchievedRate,
		Requests: r.Requests, OK: r.OK,
		P95us: r.Latency.P95, P99us: r.Latency.P99,
		GenBottleneck: r.Generator.Bottleneck, GenReason: r.Generator.Reason,
		Dropped: r.Errors["dropped"],
	}
}

// ErrorShare is the share of requests that failed or were not 2xx.
func (m Measure) ErrorShare() float64 {
	if m.Requests == 0 {
		return 0
	}
	return float64(m.Requests-min(m.OK, m.Requests)) / float64(m.Requests)
}

// proxyErrorShare is ErrorShare without the requests the generator
// dropped unsent.
func (m Measure) proxyErrorShare() float64 {
	if m.Requests == 0 {
		return 0
	}
	bad := m.Requests - min(m.OK, m.Requests)
	return float64(bad-min(m.Dropped, bad)) / float64(m.Requests)
}

// Judge applies c to m. Every failed criterion gives one reason. A step
// that fails only on latency or on the delivered rate while the generator
// reports itself as the bottleneck is GenLimited (a late generator inflates
// latency and sends less), with the generator's reason last. Errors (failed
// or non-2xx responses) and a window without any response are the proxy's
// failure whatever the generator says: a late sender does not make a proxy
// answer 502 or not at all.
func Judge(c Criteria, m Measure) Outcome {
	var reasons []string
	proxyFault := false
	if m.Requests == 0 {
		reasons = append(reasons, "no responses in the measured window")
		proxyFault = true
	} else {
		if us := c.P95.Microseconds(); m.P95us >= us {
			reasons = append(reasons, fmt.Sprintf("p95 %s >= %s", units.Micros(m.P95us), units.Micros(us)))
		}
		if us := c.P99.Microseconds(); m.P99us >= us {
			reasons = append(reasons, fmt.Sprintf("p99 %s >= %s", units.Micros(m.P99us), units.Micros(us)))
		}
		// errors < max_errors; max_errors 0 allows none. Requests the
		// generator dropped unsent are its own failure when it reports
		// itself as the bottleneck; what the proxy failed is the rest.
		if e := m.ErrorShare(); e > 0 && e >= c.MaxErrors {
			reasons = append(reasons, fmt.Sprintf("errors %.2f%% >= %.2f%%", e*100, c.MaxErrors*100))
			if p := m.proxyErrorShare(); !m.GenBottleneck || p > 0 && p >= c.MaxErrors {
				proxyFault = true
			}
		}
	}
	if m.Offered > 0 && m.Achieved < c.MinAchieved*m.Offered {
		reasons = append(reasons, fmt.Sprintf("delivered %s/s, %.1f%% of %s/s offered (< %.0f%%)", units.Rate(m.Achieved), 100*m.Achieved/m.Offered, units.Rate(m.Offered), c.MinAchieved*100))
	}
	if len(reasons) == 0 {
		return Outcome{Verdict: Pass}
	}
	if m.GenBottleneck && !proxyFault {
		r := "generator was the bottleneck"
		if m.GenReason != "" {
			r += ": " + m.GenReason
		}
		return Outcome{Verdict: GenLimited, Reasons: append(reasons, r)}
	}
	return Outcome{Verdict: Fail, Reasons: reasons}
}
