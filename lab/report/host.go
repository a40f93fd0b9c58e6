package report

import (
	"fmt"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/spread"
)

// hostLine says in one line how much of the machine the host took while
// the steps measured: the steal and iowait of the lab's CPUs over each
// step (results.Step.Host), their median and the step with the most.
// Empty when no step recorded them.
func hostLine(f *results.File) string {
	var steal, iowait []float64
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
		if worst == nil || st.Host.Steal > worst.Host.Steal {
			worst, worstUnit = st, u.ID
		}
	})
	if len(steal) == 0 {
		return ""
	}
	s := fmt.Sprintf("The host during the %d steps (/proc/stat of the lab's %d CPUs): steal median %s, at most %s (%s, step %d); iowait median %s, at most %s",
		len(steal), worst.Host.CPUs, fmtPct(spread.Of(steal).Median), fmtPct(worst.Host.Steal), worstUnit, worst.Seq, fmtPct(spread.Of(iowait).Median), fmtPct(spread.Of(iowait).Max))
	if noisy == 0 {
		return s + fmt.Sprintf("; no step above %s steal.", fmtPct(results.NoisySteal))
	}
	return s + fmt.Sprintf("; %d of them flagged noisy (steal above %s): read their rows with care.", noisy, fmtPct(results.NoisySteal))
}
