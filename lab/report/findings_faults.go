package report

import (
	"fmt"

	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

func proxyExitOf(st *results.Step) *results.ProcessExit   { return st.ProxyExit }
func backendExitOf(st *results.Step) *results.ProcessExit { return st.BackendExit }

// firstDeath is the first step of u in which of(step) records a death, nil
// when none did.
func firstDeath(u *results.Unit, of func(*results.Step) *results.ProcessExit) *results.Step {
	for _, st := range u.Steps {
		if of(st) != nil {
			return st
		}
	}
	return nil
}

// deaths says, for every unit whose proxy or backend died during a step,
// who died how and when, what failed after it, and whether it was started
// again: "nginx-keepalive128 was killed by SIGKILL at t=6 s into
// sustained at 20,000 req/s; 31,024 requests failed after that".
func deaths(f *results.File) []string {
	var out []string
	for _, u := range f.Units {
		if !reportable(u) {
			continue
		}
		for _, st := range u.Steps {
			for _, d := range []struct {
				who string
				x   *results.ProcessExit
			}{{u.Profile, st.ProxyExit}, {"the backend", st.BackendExit}} {
				if d.x == nil {
					continue
				}
				out = append(out, deathWords(f, u, st, d.who, d.x))
			}
		}
	}
	return out
}

// deathWords is one death's finding.
func deathWords(f *results.File, u *results.Unit, st *results.Step, who string, x *results.ProcessExit) string {
	s := fmt.Sprintf("%s %s at t=%s s into %s", who, x.How(), trimFloat(x.T), stepName(u, st))
	if x.OOM && f.Plan != nil && f.Plan.MemoryLimit > 0 && who == u.Profile {
		s += " (the plan's memory limit of " + units.FormatBytes(int64(f.Plan.MemoryLimit)) + ")"
	}
	s += fmt.Sprintf("; %s requests failed after that", units.Int(int64(x.FailedAfter)))
	switch {
	case x.Restarted:
		s += "; it was started again for the next step"
	case x.Restart != "":
		s += "; it could not be started again: " + x.Restart
	}
	switch {
	case u.Method == plan.MethodSearch && who == u.Profile:
		s += ". The search ended there"
	case u.Method == plan.MethodSearch:
		s += ". The search of " + u.Profile + " ended there"
	}
	return s + "; the row is marked ✗ and left out of the rankings."
}

// trimFloat prints t with at most one decimal, without a trailing ".0".
func trimFloat(t float64) string {
	s := fmt.Sprintf("%.1f", t)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		return s[:len(s)-2]
	}
	return s
}
