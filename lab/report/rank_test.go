package report

import "testing"

// TestRankingMarks checks the one ranking: rows a mark leaves out are listed
// after it under the mark's note, notes of other marks follow the rate, and
// rowsTied rows share a place.
func TestRankingMarks(t *testing.T) {
	rows := []row{
		{profile: "a", rate: 100},
		{profile: "b", rate: 300, genLim: true},
		{profile: "c", rate: 200},
		{profile: "d", rate: 50},
	}
	markRows(rows)
	if got, want := rows[1].syms(), "†"; got != want {
		t.Fatalf("syms = %q, want %q", got, want)
	}
	if got, want := ranking(rows, false, "2xx/s"), "Ranking by 2xx/s: 1. c 200, 2. a 100, 3. d 50 (left out, generator-limited: b)"; got != want {
		t.Fatalf("ranking:\n got %s\nwant %s", got, want)
	}

	saved := markRules
	defer func() { markRules = saved }()
	markRules = append(markRules, func(r *row) (mark, bool) {
		return mark{note: "capped by the backend"}, r.profile == "a"
	})
	markRows(rows)
	savedTied := rowsTied
	rowsTied = func(x, y row) bool { return x.rate-y.rate <= 100 && x.rate != 200 }
	defer func() { rowsTied = savedTied }()
	if got, want := ranking(rows, false, "2xx/s"), "Ranking by 2xx/s: 1. c 200, =2. a 100 (capped by the backend), =2. d 50 (left out, generator-limited: b)"; got != want {
		t.Fatalf("ranking:\n got %s\nwant %s", got, want)
	}
}
