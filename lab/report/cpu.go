package report

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/results"
)

// A fixed rate below every proxy's knee costs each proxy CPU in proportion
// to what it does per request, and unlike a rate found near the knee that
// cost holds still from run to run (HttpArena scores CPU per request from
// the cgroup). cpuRanking ranks a fixed-rate scenario's proxies by it.

// cpuPer1k is the proxy's CPU per 1,000 2xx responses in a step, in
// core-milliseconds (CPU average over the measured window over 2xx/s);
// false when the step has no CPU samples or no 2xx.
func cpuPer1k(st *results.Step) (float64, bool) {
	if st == nil || st.Result == nil || st.Interrupted || st.ProxySum.Samples == 0 || st.Result.AchievedRate <= 0 {
		return 0, false
	}
	return st.ProxySum.CPUAvg / st.Result.AchievedRate * 1e6, true
}

// fmtCPUMs writes core-milliseconds per 1,000 requests: "412 ms".
func fmtCPUMs(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.3g ms", v)
}

// cpuFloor is the tie floor of one run's CPU per request: the cgroup's CPU
// over a few seconds of a fixed rate (10%, as a closed loop's rate).
const cpuFloor = noiseFloor

// cpuRanking ranks the rows of one offered rate (the scenario's lowest,
// when it has several) by the proxy's CPU per 1,000 requests, lowest
// first: one value per run (over rounds), rows sharing a place unless
// their values separate. Empty when fewer than two rows have it.
func cpuRanking(f *results.File, rows []row, withKey bool) string {
	rate := 0.0
	for _, r := range rows {
		if r.rate > 0 && (rate == 0 || r.rate < rate) {
			rate = r.rate
		}
	}
	var out []row
	for _, r := range rows {
		// A generator that sent late still delivered the rate: the
		// proxy's CPU per request stands; one that fell short did not.
		if r.rate != rate || r.unit == nil || r.genLim && r.achieved < 0.97*rate {
			continue
		}
		c := r
		c.vals, c.rounds, c.rateText, c.marks, c.genLim = nil, nil, "", nil, false
		byRound := map[int]float64{}
		for _, st := range r.unit.Steps {
			if st.Rate != rate {
				continue
			}
			if v, ok := cpuPer1k(st); ok {
				c.vals = append(c.vals, v)
				byRound[st.Round] = v
			}
		}
		if len(c.vals) == 0 {
			continue
		}
		for k := 1; k <= roundCount(f) && roundCount(f) > 1; k++ {
			c.rounds = append(c.rounds, byRound[k])
		}
		c.setRuns(c.vals, cpuFloor)
		if len(c.vals) == 1 {
			c.rate = c.vals[0]
		}
		c.format, c.lower = fmtCPUMs, true
		out = append(out, c)
	}
	if len(out) < 2 {
		return ""
	}
	return ranking(out, withKey, fmt.Sprintf("proxy CPU per 1,000 requests at %s req/s (core-ms, lowest first)", fmtRate(rate)))
}
