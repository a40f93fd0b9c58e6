package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
	"github.com/loadlab/loadlab/lab/spread"
)

// roundsUnit is searchUnit with one search per round at each of rates,
// its steps tagged with their round and run, the median search its row.
func roundsUnit(scenario, profile, key string, rates ...float64) *results.Unit {
	u := searchUnit(scenario, profile, key, "1cpu", rates[0])
	u.Steps = nil
	for k, rate := range rates {
		s := &search.Result{Rate: rate, Confirmed: true, LastPass: rate, FirstFail: rate * 1.05, Steps: 1}
		u.Searches = append(u.Searches, s)
		st := mkStep(k+1, spec{phase: "confirm", confirm: 1, rate: rate, ok: uint64(rate * 24), p50: 500, p99: 2500, cpu: 0.8, mem: 9 << 20})
		st.Round, st.Run = k+1, k+1
		u.Steps = append(u.Steps, st)
	}
	u.SearchRun = search.Median(derefAll(u.Searches)) + 1
	u.Search = u.Searches[u.SearchRun-1]
	return u
}

func derefAll(ss []*search.Result) []search.Result {
	out := make([]search.Result, len(ss))
	for i, s := range ss {
		out[i] = *s
	}
	return out
}

// With rounds, a seed's row says in how many rounds the finding held: the
// key factor of 10 in two rounds and 1.25 in the third is "yes (2 of 3
// rounds)"; in one of three it is "no (1 of 3 rounds)". A run of one round
// says a plain yes.
func TestSeedsByRound(t *testing.T) {
	for _, c := range []struct {
		p256 []float64
		want string
	}{
		{[]float64{4100, 4000, 500}, "yes (2 of 3 rounds)"},
		{[]float64{4100, 500, 520}, "no (1 of 3 rounds)"},
		{[]float64{4100, 4000, 4200}, "yes (3 of 3 rounds)"},
	} {
		f := synthFileOf(t, strings.Replace(seedsPlan, "scenarios:", "rounds: 3\nscenarios:", 1))
		f.Rounds = []results.Round{{Round: 1, Done: true}, {Round: 2, Done: true}, {Round: 3, Done: true}}
		f.Units = append(f.Units, roundsUnit("handshake", "nginx-stock", "p256", c.p256...), roundsUnit("handshake", "nginx-stock", "rsa4096", 410, 400, 400))
		r, md := build(t, f)
		if row := seedRow(t, r, "key-factor"); row[4] != c.want {
			t.Errorf("p256 %v: %q, want %q", c.p256, row, c.want)
		}
		if !strings.Contains(md, "This run has 3 rounds") {
			t.Errorf("no footnote on rounds:\n%s", md)
		}
		// the idle memory is measured once: no count
		if row := seedRow(t, r, "idle-memory"); row[4] != "yes" {
			t.Errorf("idle-memory: %q", row)
		}
	}
	f := synthFileOf(t, seedsPlan)
	f.Units = append(f.Units, searchUnit("handshake", "nginx-stock", "p256", "1cpu", 4100), searchUnit("handshake", "nginx-stock", "rsa4096", "1cpu", 410))
	r, _ := build(t, f)
	if row := seedRow(t, r, "key-factor"); row[4] != "yes" {
		t.Errorf("one round: %q", row)
	}
}

// roundView renumbers a round's runs from 1 and keeps only its steps.
func TestRoundView(t *testing.T) {
	f := synthFileOf(t, strings.Replace(seedsPlan, "scenarios:", "rounds: 3\nscenarios:", 1))
	f.Rounds = make([]results.Round, 3)
	u := roundsUnit("handshake", "nginx-stock", "p256", 100, 200, 300)
	f.Units = []*results.Unit{u}
	v := roundView(f, 2)
	got := v.Units[0]
	if len(got.Steps) != 1 || got.Steps[0].Run != 0 || got.Steps[0].Rate != 200 || got.Search == nil || got.Search.Rate != 200 || len(got.Searches) != 0 {
		t.Fatalf("round 2 view %+v, steps %+v", got, got.Steps)
	}
	if u.Steps[1].Run != 2 || len(u.Searches) != 3 {
		t.Fatal("the view changed the file")
	}
}

// The header gives the control's spread over the rounds.
func TestControlLine(t *testing.T) {
	f := synthFileOf(t, strings.Replace(seedsPlan, "scenarios:", "rounds: 3\ncontrol: {rate: 8000, connections: 100, step: 2s, discard: 500ms}\nscenarios:", 1))
	if controlLine(f) != "" {
		t.Fatal("a line without controls")
	}
	for k, rate := range []float64{40000, 44000, 36000} {
		c := &results.Unit{ID: "control", Status: results.StatusDone}
		fixed := mkStep(1, spec{rate: 8000, ok: 8000 * 2, p50: 300, p99: 1000 * int64(k+1)})
		closed := mkStep(2, spec{rate: 0, ok: uint64(rate * 2), p50: 300, p99: 2000})
		closed.Result.AchievedRate = rate
		c.Steps = []*results.Step{fixed, closed}
		f.Rounds = append(f.Rounds, results.Round{Round: k + 1, Control: c})
	}
	got := controlLine(f)
	for _, want := range []string{"3 rounds", "closed loop at 40,000 2xx/s (36,000–44,000, ±10% around the median)", "at 8,000 req/s"} {
		if !strings.Contains(got, want) {
			t.Errorf("line lacks %q: %s", want, got)
		}
	}
}

// Rankings over rounds: rows whose min–max ranges overlap share a place;
// separated ranges do not; overlapping ranges whose same-round ratio stays
// beyond the floor in every round are apart too (drift moved both).
func TestRankingOverRounds(t *testing.T) {
	mk := func(name string, vals ...float64) row {
		return row{profile: name, rate: spread.Of(vals).Median, vals: vals, rounds: vals, floor: 0.15}
	}
	for _, c := range []struct {
		a, b row
		tied bool
	}{
		{mk("a", 10000, 11000, 10500), mk("b", 10200, 10800, 9900), true},   // overlap, ratio 0.98–1.06
		{mk("a", 13000, 13500, 14000), mk("b", 10000, 10500, 11000), false}, // separated
		{mk("a", 10000, 12000, 14000), mk("b", 9000, 10800, 12600), false},  // overlap, ratio 1.11 each round
		{mk("a", 10000, 12000, 14000), mk("b", 9500, 11400, 13300), true},   // overlap, ratio 1.05 each round: within ±7.5%
	} {
		if got := noiseTied(c.a, c.b); got != c.tied {
			t.Errorf("%v vs %v: tied %v, want %v", c.a.vals, c.b.vals, got, c.tied)
		}
	}
	rows := []row{mk("a", 10000, 11000, 10500), mk("b", 10200, 10800, 9900)}
	if got := ranking(rows, false, "rate"); !strings.Contains(got, "=1. a") || !strings.Contains(got, "=1. b") || !strings.Contains(got, "a / b per round: 0.98–1.06") {
		t.Errorf("shared place: %s", got)
	}
}
