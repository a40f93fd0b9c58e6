package report

import (
	"fmt"
	"strings"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// hostLine says in one line how much of the machine the host took while
// the steps measured: the steal and iowait of the lab's CPUs over each
// step (results.Step.Host), their median and the step with the most.
// Empty when no step recorded them.
func hostLine(f *results.File) string {
	var steal, iowait, foreign []float64
	var worst *results.Step
	var worstUnit string
	noisy := 0
	eachStep(f, func(u *results.Unit, st *results.Step) {
		if st.Host == nil {
			return
		}
		if st.Noisy {
			noisy++
		}
		steal = append(steal, st.Host.Steal)
		iowait = append(iowait, st.Host.IOWait)
		if st.Host.Busy > 0 {
			foreign = append(foreign, st.Host.Foreign)
		}
		if worst == nil || st.Host.Steal > worst.Host.Steal {
			worst, worstUnit = st, u.ID
		}
	})
	if len(steal) == 0 {
		return ""
	}
	s := fmt.Sprintf("The host during the %d steps (/proc/stat of the lab's %d CPUs): steal median %s, at most %s (%s, step %d); iowait median %s, at most %s",
		len(steal), worst.Host.CPUs, fmtPct(spread.Of(steal).Median), fmtPct(worst.Host.Steal), worstUnit, worst.Seq, fmtPct(spread.Of(iowait).Median), fmtPct(spread.Of(iowait).Max))
	rule := fmt.Sprintf("%s steal", fmtPct(results.NoisySteal))
	if len(foreign) > 0 {
		fs := spread.Of(foreign)
		s += fmt.Sprintf("; CPU used by something outside the lab median %.2f cores, at most %.2f", fs.Median, fs.Max)
		rule += fmt.Sprintf(" or %.2f foreign cores", results.NoisyForeign)
	}
	if noisy == 0 {
		return s + fmt.Sprintf("; no step above %s.", rule) + wakeWords(f)
	}
	return s + fmt.Sprintf("; %d of them flagged noisy (above %s): read their rows with care%s.", noisy, rule, remeasuredWords(f)) + wakeWords(f)
}

// wakeWords says how late the machine woke sleeping threads during the
// steps (the generator's wake probe, gen.Config.WakeProbe): the median
// and the worst step's p99 overshoot of a 1 ms sleep beside the loops.
// Empty when no step measured it.
func wakeWords(f *results.File) string {
	var p99 []float64
	var worst *results.Step
	var worstUnit string
	eachStep(f, func(u *results.Unit, st *results.Step) {
		w := st.Result.Generator.WakeFloor
		if w == nil || !w.During || w.Sleeps == 0 {
			return
		}
		p99 = append(p99, float64(w.P99us))
		if worst == nil || w.P99us > worst.Result.Generator.WakeFloor.P99us {
			worst, worstUnit = st, u.ID
		}
	})
	if len(p99) == 0 {
		return ""
	}
	w := worst.Result.Generator.WakeFloor
	return fmt.Sprintf(" The machine's wake floor during the steps (a %s sleep beside the generator's loops, p99 of its overshoot): median %s, at most %s (%s, step %d).",
		fmtLatency(w.SleepUs), fmtLatency(int64(spread.Of(p99).Median)), fmtLatency(w.P99us), worstUnit, worst.Seq)
}

// controlLine says how much the round's control moved across the rounds
// (plan control): the run's own noise, the same load on the same target
// each round. Empty without controls.
func controlLine(f *results.File) string {
	var rates, p99s []float64
	var moved []string
	after := ""
	for i, r := range f.Rounds {
		controls := []*results.Unit{r.Control}
		if r.ControlAfter != nil {
			controls, after = append(controls, r.ControlAfter), " and after the last"
		}
		for _, c := range controls {
			rate, p99 := results.ControlValues(c)
			if rate > 0 {
				rates = append(rates, rate)
			}
			if p99 > 0 {
				p99s = append(p99s, float64(p99))
			}
		}
		if results.MovedBeyond(r.ControlMoved) {
			moved = append(moved, fmt.Sprintf("round %d (%+.0f%%)", i+1, 100*r.ControlMoved))
		}
	}
	if len(rates) == 0 && len(p99s) == 0 {
		return ""
	}
	c := f.Plan.Control
	s := fmt.Sprintf("This run's noise, measured: the control (the generator against loadlab serve, no proxy, at the start of each of %d rounds%s)", len(f.Rounds), after)
	if len(rates) > 0 {
		sp := spread.Of(rates)
		s += fmt.Sprintf(" ran a closed loop at %s 2xx/s (%s–%s, ±%s around the median)", fmtRate(sp.Median), fmtRate(sp.Min), fmtRate(sp.Max), pctWords(halfRange(sp)))
	}
	if len(p99s) > 0 && c != nil {
		sp := spread.Of(p99s)
		s += fmt.Sprintf(" and a p99 of %s (%s–%s) at %s req/s", fmtLatency(int64(sp.Median)), fmtLatency(int64(sp.Min)), fmtLatency(int64(sp.Max)), fmtRate(c.Rate))
	}
	s += ". Rows carry vs_control, their value over their own round's control (loadlab compare shows it beside the rate)."
	if len(moved) > 0 {
		s += fmt.Sprintf(" The control moved beyond %s across %s: those rounds' steps are flagged noisy.", pctWords(results.NoisyControl), strings.Join(moved, ", "))
	}
	return s
}

// halfRange is half the min–max range as a share of the median.
func halfRange(s spread.Summary) float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / 2 / s.Median
}

// remeasuredWords says how many units' rounds were measured again.
func remeasuredWords(f *results.File) string {
	n := 0
	for _, u := range f.Units {
		n += len(u.Remeasured)
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d unit round(s) measured again at the end of their round; the rows read the second measurement)", n)
}
