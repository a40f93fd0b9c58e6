package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
)

func TestHostLine(t *testing.T) {
	f := &results.File{}
	if s := hostLine(f); s != "" {
		t.Fatalf("no steps: %q", s)
	}
	mk := func(seq int, steal, iowait float64) *results.Step {
		return &results.Step{Seq: seq, Result: &result.Result{}, Host: &results.HostCPU{CPUs: 2, Steal: steal, IOWait: iowait}}
	}
	f.Units = []*results.Unit{
		{ID: "a", Status: results.StatusDone, Steps: []*results.Step{mk(1, 0.01, 0), mk(2, 0.05, 0.002), {Seq: 3, Result: &result.Result{}}}},
		{ID: "b", Status: results.StatusDone, Steps: []*results.Step{mk(1, 0.02, 0.001)}},
	}
	f.Units[0].Steps[1].Noisy = true
	want := "The host during the 3 steps (/proc/stat of the lab's 2 CPUs): steal median 2.00%, at most 5.00% (a, step 2); iowait median 0.10%, at most 0.20%; 1 of them flagged noisy (above 2.00% steal): read their rows with care."
	if s := hostLine(f); s != want {
		t.Fatalf("got  %q\nwant %q", s, want)
	}
	f.Units[0].Steps[1].Noisy = false
	if s := hostLine(f); !strings.HasSuffix(s, "; no step above 2.00% steal.") {
		t.Fatalf("none flagged: %q", s)
	}
}

// With foreign CPU recorded, the host line gives it and the rule, and says
// how many unit rounds were measured again.
func TestHostLineForeign(t *testing.T) {
	f := synthFile(t)
	u := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 1000)
	for i, st := range u.Steps {
		st.Host = &results.HostCPU{CPUs: 2, Busy: 1.5, Foreign: 0.05 * float64(i+1)}
	}
	u.Steps[2].Noisy = true
	u.Remeasured = []results.Remeasured{{Round: 2}}
	f.Units = []*results.Unit{u}
	got := hostLine(f)
	for _, want := range []string{"outside the lab median 0.10 cores, at most 0.15", "1 of them flagged noisy (above 2.00% steal or 0.50 foreign cores)", "1 unit round(s) measured again"} {
		if !strings.Contains(got, want) {
			t.Errorf("host line lacks %q: %s", want, got)
		}
	}
}

// The host line gives the wake floor the steps measured during their run:
// the median of their p99s and the worst step; a floor probed after a run
// (not During) is not the step's and is left out.
func TestHostLineWakeFloor(t *testing.T) {
	mk := func(seq int, p99 int64, during bool) *results.Step {
		res := &result.Result{}
		res.Generator.WakeFloor = &result.WakeFloor{During: during, Sleeps: 900, SleepUs: 1000, P99us: p99}
		return &results.Step{Seq: seq, Result: res, Host: &results.HostCPU{CPUs: 2}}
	}
	f := &results.File{Units: []*results.Unit{
		{ID: "a", Status: results.StatusDone, Steps: []*results.Step{mk(1, 80, true), mk(2, 2_400, true), mk(3, 9_000, false)}},
		{ID: "b", Status: results.StatusDone, Steps: []*results.Step{mk(1, 120, true)}},
	}}
	got := hostLine(f)
	if want := "wake floor during the steps (a 1.00 ms sleep beside the generator's loops, p99 of its overshoot): median 120 µs, at most 2.40 ms (a, step 2)."; !strings.Contains(got, want) {
		t.Errorf("host line lacks %q:\n%s", want, got)
	}
	for _, st := range f.Units[0].Steps[:2] {
		st.Result.Generator.WakeFloor = nil
	}
	f.Units[1].Steps[0].Result.Generator.WakeFloor = nil
	if got := hostLine(f); strings.Contains(got, "wake floor") {
		t.Errorf("no step measured it during its run, yet: %s", got)
	}
}
