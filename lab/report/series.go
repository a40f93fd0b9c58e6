package report

import (
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
)

// failure is where a per-second series first shows failed or non-2xx
// responses.
type failure struct {
	found    bool
	second   int    // the second it happened
	okBefore uint64 // 2xx responses up to the end of that second
	// okUntilDry is the 2xx responses until the successes stopped: up to
	// the first second after the failure with failures and no 2xx at all
	// (the requests in flight when a resource ran out still finish), or
	// okBefore when they never stop. When a resource runs out for good it
	// is how many requests it served: the seeds' "the first N requests
	// worked".
	okUntilDry uint64
	drySecond  int // the first second with failures and no 2xx (-1: none)
}

// firstFailure finds the first second with failed or non-2xx responses.
// The 2xx responses of that second count as before the failure: when a
// resource runs out, the successes of that second came first.
func firstFailure(ps []result.Second) failure {
	var ok uint64
	for i, s := range ps {
		ok += s.OK
		if s.Non2xx+s.Errors == 0 {
			continue
		}
		f := failure{found: true, second: s.T, okBefore: ok, okUntilDry: ok, drySecond: -1}
		dry := ok
		for _, d := range ps[i+1:] {
			if d.OK == 0 && d.Non2xx+d.Errors > 0 {
				f.okUntilDry, f.drySecond = dry, d.T
				break
			}
			dry += d.OK
		}
		return f
	}
	return failure{}
}

// phase is a stretch of seconds that worked or failed.
type phase struct {
	failing    bool
	start, end int // seconds, end exclusive
}

// phases splits a series into working and failing stretches: a second
// fails when failed plus non-2xx responses outnumber the 2xx ones, works
// when 2xx are at least twice the failures; seconds in between (and idle
// seconds) extend the current stretch. Stretches shorter than minLen
// seconds merge into their neighbour.
func phases(ps []result.Second, minLen int) []phase {
	var out []phase
	for _, s := range ps {
		bad := s.Non2xx + s.Errors
		var failing bool
		switch {
		case bad > s.OK:
			failing = true
		case s.OK >= 2*bad && s.OK > 0:
			failing = false
		default:
			if len(out) > 0 {
				out[len(out)-1].end = s.T + 1
			}
			continue
		}
		if n := len(out); n > 0 && out[n-1].failing == failing {
			out[n-1].end = s.T + 1
			continue
		}
		out = append(out, phase{failing: failing, start: s.T, end: s.T + 1})
	}
	// merge short stretches into the previous one
	var merged []phase
	for _, p := range out {
		if n := len(merged); n > 0 && (p.end-p.start < minLen || merged[n-1].failing == p.failing) {
			merged[n-1].end = p.end
			continue
		}
		merged = append(merged, p)
	}
	return merged
}

// okRate is the mean 2xx/s over seconds [from, to) of a series.
func okRate(ps []result.Second, from, to int) float64 {
	var sum uint64
	n := 0
	for _, s := range ps {
		if s.T >= from && s.T < to {
			sum += s.OK
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

// maxTimeWait is the highest TIME_WAIT count among the proxy samples.
func maxTimeWait(samples []results.ProxySample) int {
	m := -1
	for _, s := range samples {
		m = max(m, s.TimeWait)
	}
	return m
}

// seriesFailures counts failed and non-2xx responses of a whole series
// (warmup included).
func seriesFailures(ps []result.Second) uint64 {
	var n uint64
	for _, s := range ps {
		n += s.Non2xx + s.Errors
	}
	return n
}
