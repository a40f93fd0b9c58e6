package scenario

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

// finishedQuick is a finished run of the built-in quick plan as `make lab`
// recorded it: 24 units in 3 rounds with their controls, on a host where
// something outside the lab used the lab's CPUs in every step, so every
// round flagged every unit noisy and measured the noisiest one again.
// Recorded (gzipped results.json) with the fake lab and generator by the
// runner as it was before resuming learnt what a round's remeasure
// recorded: go test ./lab/scenario -run TestRecordFinishedQuick -args
// -record-fixture.
const finishedQuick = "testdata/finished-quick.json.gz"

var recordFixture = flag.Bool("record-fixture", false, "record "+finishedQuick+" from a fake quick run")

// quickHarness is a harness for the quick plan p on 2 CPUs, every
// profile installed, every step noisy (noisyHost).
func quickHarness(t *testing.T, p *plan.Plan) *harness {
	h := &harness{t: t, dir: t.TempDir(), lab: newFakeLab(), finder: notFound(), cpus: 2, plan: p}
	for name, c := range map[string]float64{"nginx-stock": 9000, "nginx-keepalive": 20000, "caddy-stock": 4000, "caddy-pool128": 4500, "haproxy": 15000} {
		h.lab.capacity[name] = c
	}
	h.lab.capacity[serveProfile.Name] = 60000
	return h
}

// noisyHost makes the runner read a host clock on which something outside
// the lab used the lab's CPUs during every generator call, more in some
// than in others (0.5 to 1.1 cores of 2 over a scripted second), so that
// every step is flagged noisy and a round's units differ in how noisy.
func noisyHost(h *harness) func() {
	var busy time.Duration
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := -1
	clock := &hostClock{cpus: pin.NewCPUSet(0, 1)}
	clock.read = func() hostMark {
		h.lab.mu.Lock()
		n := h.lab.genCalls
		h.lab.mu.Unlock()
		if n != seen {
			busy += time.Duration(500+100*(n%7)) * time.Millisecond
			seen = n
		}
		at = at.Add(time.Second)
		return hostMark{at: at, busy: busy, ok: true}
	}
	old := newHost
	newHost = func() *hostClock { return clock }
	return func() { newHost = old }
}

// TestRecordFinishedQuick writes finishedQuick (only with -record-fixture).
func TestRecordFinishedQuick(t *testing.T) {
	if !*recordFixture {
		t.Skip("records the fixture only with -record-fixture")
	}
	p, err := plan.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	h := quickHarness(t, p)
	defer noisyHost(h)()
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !f.Finished {
		t.Fatal("not finished")
	}
	b, err := os.ReadFile(filepath.Join(h.dir, results.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(finishedQuick, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d generator steps; %s", h.lab.genCalls, strings.Join(grepLines(h.log.String(), "measuring the noisiest"), "; "))
}

func grepLines(s, sub string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// fromFixture is a harness whose directory holds finishedQuick's
// results.json, edited by edit (nil: as recorded), and whose plan is the
// one recorded there: the record's plan hash is made again, as resuming
// is about which units run here, not about whether to run at all.
func fromFixture(t *testing.T, edit func(f *results.File)) (*harness, *results.File) {
	t.Helper()
	b := testutil.Gunzip(t, finishedQuick)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(f)
	}
	f.PlanHash = results.Hash(f.Plan, f.Options)
	h := quickHarness(t, f.Plan)
	h.dir = dir
	if b, err = json.MarshalIndent(f, "", " "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, results.FileName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return h, f
}

// unitsJSON is the units' records as results.json holds them.
func unitsJSON(t *testing.T, f *results.File) string {
	t.Helper()
	b, err := json.Marshal(struct {
		Units    []*results.Unit
		Ceilings []*results.Unit
		Rounds   []results.Round
	}{f.Units, f.Ceilings, f.Rounds})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Resuming a finished run measures nothing: make lab run again on the
// directory of a finished quick run (every unit and every round's
// remeasure recorded) runs no generator step, opens no lab session, and
// leaves every row as recorded. As it happened (issue 45): each round's
// remeasure picked the next noisiest unit, and measuring an earlier
// round of a unit again set its rounds done back, so its later rounds
// ran again and their rows were replaced. The same holds for a run whose
// rounds are all recorded done but whose end was not (the process died
// between the two writes): nothing is measured, the run is marked
// finished.
func TestResumeFinishedRunMeasuresNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(f *results.File)
	}{
		{"finished", nil},
		{"rounds done, end unrecorded", func(f *results.File) { f.Finished = false }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, before := fromFixture(t, c.edit)
			if len(before.Units) != 24 || len(before.Rounds) != 3 {
				t.Fatalf("fixture: %d units, %d rounds", len(before.Units), len(before.Rounds))
			}
			remeasured := 0
			for _, u := range before.Units {
				remeasured += len(u.Remeasured)
			}
			if remeasured != 3 {
				t.Fatalf("fixture: %d rounds measured again, want 3 (one a round)", remeasured)
			}
			defer noisyHost(h)()
			f, err := h.run(context.Background())
			if err != nil {
				t.Fatalf("%v\n%s", err, h.log.String())
			}
			if h.lab.genCalls != 0 || len(h.lab.opens) != 0 {
				t.Fatalf("resuming a finished run ran %d generator steps in %d lab sessions:\n%s", h.lab.genCalls, len(h.lab.opens), strings.Join(grepLines(h.log.String(), "=="), "\n"))
			}
			if !f.Finished {
				t.Fatal("not finished")
			}
			if got, want := unitsJSON(t, f), unitsJSON(t, before); got != want {
				t.Fatal("the resumed run changed the recorded rows")
			}
		})
	}
}

// A run cut short while a round measured its noisiest unit again resumes
// with that remeasure and nothing else: the unit's round runs (its steps
// recorded before the cut replayed), no other unit is measured again,
// every other row is left as recorded, and the run ends finished.
func TestResumeDuringRemeasure(t *testing.T) {
	h := newHarness(t, roundsYAML)
	defer noisyHost(h)()
	ctx, cancel := context.WithCancel(context.Background())
	h.lab.cancel = cancel
	armed := false
	h.lab.onGen = func(gen.Config) {
		// Cut on the second step of round 3's remeasure.
		if !armed && strings.Contains(h.log.String(), "== round 3: ") && strings.Contains(h.log.String(), "measuring the noisiest") {
			h.lab.cancelAt, armed = h.lab.genCalls+1, true
		}
	}
	cut, err := h.run(ctx)
	if !errors.Is(err, context.Canceled) || !armed {
		t.Fatalf("the cut run returned %v (cut armed %v)\n%s", err, armed, h.log.String())
	}
	var again *results.Unit
	for _, u := range cut.Units {
		for _, m := range u.Remeasured {
			if m.Round == 3 {
				again = u
			}
		}
	}
	if again == nil || again.RoundsDone != 2 || cut.Rounds[2].Done {
		t.Fatalf("the cut did not fall in round 3's remeasure: %+v", cut.Rounds[2])
	}
	h.lab.onGen, h.lab.cancelAt = nil, 0
	calls := h.lab.genCalls
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !f.Finished || !f.Rounds[2].Done {
		t.Fatal("the resumed run did not finish")
	}
	ran := h.lab.genCalls - calls
	u := f.Unit(again.ID)
	var round3 int
	for _, st := range u.Steps {
		if st.Round == 3 {
			round3++
		}
	}
	if u.RoundsDone != 3 || ran == 0 || ran > round3 {
		t.Fatalf("%s: rounds done %d; the resume ran %d steps, its round 3 has %d", u.ID, u.RoundsDone, ran, round3)
	}
	for _, wu := range cut.Units {
		gu := f.Unit(wu.ID)
		if wu.ID == again.ID {
			if len(gu.Remeasured) != len(wu.Remeasured) {
				t.Fatalf("%s measured again %d times, was %d", wu.ID, len(gu.Remeasured), len(wu.Remeasured))
			}
			continue
		}
		a, _ := json.Marshal(wu)
		b, _ := json.Marshal(gu)
		if string(a) != string(b) {
			t.Errorf("%s changed in the resume: remeasured %d -> %d, rounds done %d -> %d, %d -> %d steps", wu.ID, len(wu.Remeasured), len(gu.Remeasured), wu.RoundsDone, gu.RoundsDone, len(wu.Steps), len(gu.Steps))
		}
	}
	if n := len(grepLines(h.log.String(), "measuring the noisiest")); n != 3 {
		t.Fatalf("%d remeasures announced over both runs, want one a round:\n%s", n, strings.Join(grepLines(h.log.String(), "=="), "\n"))
	}
}
