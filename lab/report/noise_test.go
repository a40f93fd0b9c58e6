package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// The one ranking ties rows the noise cannot tell apart: with 4 runs a
// side by the U test, with one run by the floor.
func TestRankingTiesByNoise(t *testing.T) {
	rows := []row{
		{profile: "a", vals: []float64{1000, 1010, 1020, 1030}},
		{profile: "b", vals: []float64{1100, 1110, 1120, 1130}},
		{profile: "c", vals: []float64{1050, 1090, 1200, 1300}},
	}
	for i := range rows {
		rows[i].setRuns(rows[i].vals, 0.15)
	}
	markRows(rows)
	want := "Ranking by 2xx/s: =1. c 1,145 (1,050–1,300, n=4), =1. b 1,115 (1,100–1,130, n=4), 3. a 1,015 (1,000–1,030, n=4). " +
		"4 runs per row at least: rows share a place (=) unless a Mann-Whitney U test over their runs gives p < 0.05"
	if got := ranking(rows, false, "2xx/s"); got != want {
		t.Fatalf("ranking:\n got %s\nwant %s", got, want)
	}
	// One run each: within 10% tied, beyond it not.
	one := []row{{profile: "x", rate: 14614}, {profile: "y", rate: 13959}, {profile: "z", rate: 10000}}
	for i := range one {
		one[i].setRuns([]float64{one[i].rate}, noiseFloor)
	}
	markRows(one)
	want = "Ranking by 2xx/s: =1. x 14,614 ±5%, =1. y 13,959 ±5%, 3. z 10,000 ±5%. One run per row, so an order is not tested: each value stands for ±5% (half of 10%, the machine's run-to-run noise), and rows whose intervals overlap share a place (=); set runs: 4 or more for a test"
	if got := ranking(one, false, "2xx/s"); got != want {
		t.Fatalf("ranking:\n got %s\nwant %s", got, want)
	}
}

// A search scenario with three searches per row: the table's rate is the
// median search's with the spread, latency comes from that search's
// confirmation, the footnote says so and the ranking ties overlapping
// ranges.
func TestRepeatedSearchRows(t *testing.T) {
	f := synthFileOf(t, `
name: synth
profiles: [nginx-stock, nginx-keepalive, caddy-stock]
keys: [p256]
search: {precision: 0.05}
scenarios:
  - kind: keepalive-1k
    runs: 3
`)
	mk := func(profile string, rates []float64, p99s []int64) *results.Unit {
		u := searchUnit("keepalive-1k", profile, "p256", "1cpu", rates[0])
		u.Steps = nil
		for k, r := range rates {
			st := mkStep(k+1, spec{phase: "confirm", confirm: 1, run: k + 1, rate: r, ok: uint64(r * 24), p99: p99s[k]})
			u.Steps = append(u.Steps, st)
			u.Searches = append(u.Searches, &search.Result{Rate: r, Confirmed: true, LastPass: r, FirstFail: r * 1.05})
		}
		mid := map[string]int{"nginx-stock": 3, "nginx-keepalive": 2, "caddy-stock": 1}[profile]
		u.SearchRun, u.Search = mid, u.Searches[mid-1]
		return u
	}
	f.Units = []*results.Unit{
		mk("nginx-stock", []float64{3000, 4000, 3500}, []int64{1000, 2000, 3000}),
		mk("nginx-keepalive", []float64{9000, 10000, 11000}, []int64{4000, 5000, 6000}),
		mk("caddy-stock", []float64{3800, 3900, 3600}, []int64{7000, 8000, 9000}),
	}
	_, md := build(t, f)
	for _, want := range []string{
		"| nginx-stock | 3,500 (3,000–4,000, n=3) | 500 µs | 1.75 ms | 3.00 ms |",
		"| nginx-keepalive | 10,000 (9,000–11,000, n=3) | 500 µs | 2.75 ms | 5.00 ms |",
		"| caddy-stock | 3,800 (3,600–3,900, n=3) | 500 µs | 3.75 ms | 7.00 ms |",
		"Rate found: the median of 3 runs (in brackets the runs' min–max, and from 6 runs on the 95% confidence interval of the median).",
		"Ranking by rate found: 1. nginx-keepalive 10,000 (9,000–11,000, n=3), =2. caddy-stock 3,800 (3,600–3,900, n=3), =2. nginx-stock 3,500 (3,000–4,000, n=3). 3 searches per row",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
