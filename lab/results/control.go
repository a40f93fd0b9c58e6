package results

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/search"
)

// VsControl metrics.
const (
	VsRate = "rate"
	VsP99  = "p99"
)

// ControlValues are a control's closed-loop 2xx/s and its fixed-rate p99
// (µs); 0 where that step did not finish.
func ControlValues(c *Unit) (rate float64, p99 int64) {
	if c == nil {
		return 0, 0
	}
	for _, st := range c.Steps {
		if st.Result == nil || st.Interrupted || st.Error != "" {
			continue
		}
		if st.Rate == 0 {
			rate = st.Result.AchievedRate
		} else {
			p99 = st.Result.Latency.P99
		}
	}
	return rate, p99
}

// ControlAfter is the control that ended round k (1..N): the next
// round's, or the last round's ControlAfter (nil: not measured).
func (f *File) ControlAfter(k int) *Unit {
	if k < 1 || k > len(f.Rounds) {
		return nil
	}
	if k < len(f.Rounds) {
		return f.Rounds[k].Control
	}
	return f.Rounds[k-1].ControlAfter
}

// MarkControlMoved records how far the control moved across round k
// (Round.ControlMoved) and, when that is beyond NoisyControl either way,
// flags every step of the round noisy with why. It returns whether it
// flagged them; a second call adds nothing.
func (f *File) MarkControlMoved(k int) bool {
	if k < 1 || k > len(f.Rounds) {
		return false
	}
	a, _ := ControlValues(f.Rounds[k-1].Control)
	b, _ := ControlValues(f.ControlAfter(k))
	if a <= 0 || b <= 0 {
		return false
	}
	moved := (b - a) / a
	f.Rounds[k-1].ControlMoved = math.Round(moved*1000) / 1000
	if !MovedBeyond(moved) {
		return false
	}
	why := fmt.Sprintf("the control moved %+.0f%% across round %d (%.0f to %.0f 2xx/s; beyond %.0f%%)", 100*moved, k, a, b, 100*NoisyControl)
	for _, u := range f.Units {
		for _, st := range u.Steps {
			if st.Round != k || strings.Contains(st.NoisyWhy, "the control moved") {
				continue
			}
			st.Noisy = true
			st.NoisyWhy = strings.TrimPrefix(st.NoisyWhy+"; "+why, "; ")
		}
	}
	return true
}

// MovedBeyond reports whether a control that moved by m across a round
// ((end - start) / start) moved beyond NoisyControl, the smaller of the
// two as the base: a fall to half is as far as a rise to double.
func MovedBeyond(m float64) bool {
	return m != 0 && m > -1 && math.Abs(m)/math.Min(1, 1+m) > NoisyControl
}

// RoundValue is unit u's value in round k and its metric: the median
// rate found of the round's searches, the median 2xx/s of its closed
// loops, or the median p99 of its fixed-rate runs (a unit of one offered
// rate). ok is false when round k measured none.
func (f *File) RoundValue(u *Unit, k int) (v float64, metric string, ok bool) {
	per := 1
	if s := f.Scenario(u.Scenario); s != nil {
		per = max(s.Runs, 1)
	}
	switch u.Method {
	case plan.MethodSearch:
		all, _ := u.AllSearches()
		lo, hi := (k-1)*per, k*per
		if len(u.Searches) == 0 {
			lo, hi = 0, len(all) // one search in all: round 1's
			if k != 1 {
				return 0, VsRate, false
			}
		}
		if hi > len(all) || lo >= hi {
			// Not measured (a unit whose only round was set aside to
			// be measured again, and that run did not end).
			return 0, VsRate, false
		}
		var round []search.Result
		for _, s := range all[lo:hi] {
			round = append(round, *s)
		}
		m := round[search.Median(round)]
		return m.Rate, VsRate, m.Confirmed && m.Rate > 0
	case plan.MethodClosed, plan.MethodFixed:
		var vals []float64
		rate := -1.0
		for _, st := range u.Steps {
			if st.Round != k && !(k == 1 && st.Round == 0) || st.Result == nil || st.Interrupted || st.Error != "" {
				continue
			}
			if rate >= 0 && st.Rate != rate {
				return 0, "", false // several offered rates: no one value
			}
			rate = st.Rate
			if u.Method == plan.MethodClosed {
				vals = append(vals, st.Result.AchievedRate)
			} else {
				vals = append(vals, float64(st.Result.Latency.P99))
			}
		}
		metric := VsRate
		if u.Method == plan.MethodFixed {
			metric = VsP99
		}
		if len(vals) == 0 {
			return 0, metric, false
		}
		sort.Float64s(vals)
		return vals[(len(vals)-1)/2], metric, true
	}
	return 0, "", false
}

// VsControlOf is u's value over its round's control, per round (nil when
// the run has no controls or no round has both).
func (f *File) VsControlOf(u *Unit) *VsControl {
	var out VsControl
	var got []float64
	n := len(f.Rounds)
	if s := f.Scenario(u.Scenario); s != nil && s.Eff.Rounds > 0 {
		n = min(n, s.Eff.Rounds)
	}
	for k := 1; k <= n; k++ {
		v, metric, ok := f.RoundValue(u, k)
		out.Metric = metric
		cr, cp := ControlValues(f.Rounds[k-1].Control)
		c := cr
		if metric == VsP99 {
			c = float64(cp)
		}
		ratio := 0.0
		if ok && c > 0 && v > 0 {
			ratio = v / c
			got = append(got, ratio)
		}
		out.Rounds = append(out.Rounds, ratio)
	}
	if len(got) == 0 {
		return nil
	}
	sort.Float64s(got)
	out.Median = got[(len(got)-1)/2]
	return &out
}
