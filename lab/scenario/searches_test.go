package scenario

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// A search scenario with runs: 3 runs three whole searches, each with its
// confirmation, records them all with their steps tagged by search, and
// makes the one of the median rate found the unit's Search; a second run
// of the same command replays them without a generator call.
func TestRepeatedSearches(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [nginx-stock]
net: netns
cpus: {server: "1"}
search: {start: 1000, max: 16000, precision: 0.05, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 3s, cooldown_cap: 10ms}
scenarios:
  - kind: keepalive-1k
    runs: 3
`)
	// The proxy sustains 3,000, then 5,000, then 4,000 req/s: the capacity
	// moves on after each passing confirmation (3 s steps).
	caps := []float64{3000, 5000, 4000}
	h.lab.capacity["nginx-stock"] = caps[0]
	searchNo := 0
	h.lab.onGen = func(cfg gen.Config) {
		if searchNo >= len(caps) || !slices.Contains(cfg.Headers, "Host: nginx-stock") {
			return
		}
		h.lab.capacity["nginx-stock"] = caps[searchNo]
		if cfg.Duration == 3*time.Second && cfg.Rate <= caps[searchNo] { // this confirmation passes
			searchNo++
		}
	}
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	u := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	if u == nil || u.Status != results.StatusDone || len(u.Searches) != 3 || u.SearchRun != 3 {
		for _, s := range u.Searches {
			t.Logf("search %+v", *s)
		}
		t.Fatalf("unit %+v", u)
	}
	for i, want := range caps {
		s := u.Searches[i]
		if !s.Confirmed || s.Rate > want || s.Rate < want/1.05 {
			t.Fatalf("search %d found %+v, want within 5%% below %g", i+1, s, want)
		}
	}
	if *u.Search != *u.Searches[2] {
		t.Fatalf("row search %+v, want the median one %+v", u.Search, u.Searches[2])
	}
	// every step belongs to one search, in order, each ending in its confirmation
	last := 0
	for _, st := range u.Steps {
		if st.Run < last || st.Run < 1 || st.Run > 3 {
			t.Fatalf("step %d tagged run %d after %d", st.Seq, st.Run, last)
		}
		last = st.Run
	}
	for k := 1; k <= 3; k++ {
		var lastOf *results.Step
		for _, st := range u.Steps {
			if st.Run == k {
				lastOf = st
			}
		}
		if lastOf == nil || lastOf.Phase != string(search.PhaseConfirm) || lastOf.Verdict != string(search.Pass) {
			t.Fatalf("search %d ends with %+v", k, lastOf)
		}
	}
	if !strings.Contains(h.log.String(), "3 rate searches from 1,000 req/s") || !strings.Contains(h.log.String(), "search 2 of 3") {
		t.Errorf("progress does not say the searches:\n%s", h.log.String())
	}
	// netns: every step in fresh namespaces
	if h.lab.renewals < len(u.Steps) {
		t.Fatalf("%d renewals for %d steps", h.lab.renewals, len(u.Steps))
	}
	// resume: everything replays
	calls := h.lab.genCalls
	f, err = h.run(context.Background())
	if err != nil || h.lab.genCalls != calls {
		t.Fatalf("resume: %v, %d new generator calls", err, h.lab.genCalls-calls)
	}
	if u2 := f.Unit(u.ID); u2.SearchRun != 3 || len(u2.Searches) != 3 || *u2.Search != *u.Search {
		t.Fatalf("resumed unit %+v", u2)
	}
}

func TestSearchRunsEstimate(t *testing.T) {
	p, err := plan.Parse([]byte(`
name: t
profiles: [nginx-stock]
search: {start: 1000, max: 8000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 3s}
scenarios:
  - kind: keepalive-1k
    runs: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios[0]
	one, all := s.SearchEstimate(), s.Estimate()
	if all.Steps != 3*one.Steps || all.Time != 3*one.Time || one.Steps == 0 {
		t.Fatalf("one search %+v, three %+v", one, all)
	}
}
