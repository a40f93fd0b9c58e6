package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen"

	"github.com/loadlab/loadlab/lab/results"
)

func TestHostLine(t *testing.T) {
	f := &results.File{}
	if s := hostLine(f); s != "" {
		t.Fatalf("no steps: %q", s)
	}
	mk := func(seq int, steal, iowait float64) *results.Step {
		return &results.Step{Seq: seq, Result: &gen.Result{}, Host: &results.HostCPU{CPUs: 2, Steal: steal, IOWait: iowait}}
	}
	f.Units = []*results.Unit{
		{ID: "a", Status: results.StatusDone, Steps: []*results.Step{mk(1, 0.01, 0), mk(2, 0.05, 0.002), {Seq: 3, Result: &gen.Result{}}}},
		{ID: "b", Status: results.StatusDone, Steps: []*results.Step{mk(1, 0.02, 0.001)}},
	}
	f.Units[0].Steps[1].Noisy = true
	want := "The host during the 3 steps (/proc/stat of the lab's 2 CPUs): steal median 2.00%, at most 5.00% (a, step 2); iowait median 0.10%, at most 0.20%; 1 of them flagged noisy (steal above 2.00%): read their rows with care."
	if s := hostLine(f); s != want {
		t.Fatalf("got  %q\nwant %q", s, want)
	}
	f.Units[0].Steps[1].Noisy = false
	if s := hostLine(f); !strings.HasSuffix(s, "; no step above 2.00% steal.") {
		t.Fatalf("none flagged: %q", s)
	}
}
