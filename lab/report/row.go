package report

import "github.com/loadlab/loadlab/lab/results"

// row is one line of a scenario table, taken from one representative step.
type row struct {
	unit     *results.Unit
	step     *results.Step // nil when no step qualifies
	profile  string
	version  string // the binary's version, in the label when rows of one server ran two versions (withVersions)
	key      string
	rate     float64 // rate found (search), offered (fixed) or achieved (closed)
	rateText string  // when rate alone does not say it ("not confirmed ...")
	achieved float64
	errShare float64
	memIdle  uint64               // idle anon + kernel
	genLim   bool                 // the generator was the bottleneck: excluded from rankings
	genText  string               // the generator verdict cell
	genWhy   string               // the generator's reason, for the footnote
	runs     string               // fixed/closed: the other runs, in short
	headroom string               // the generator's headroom: ceiling over rate, and its loops' busy+starved share
	atCeil   bool                 // the search stopped at the generator's ceiling
	marks    []mark               // why the row is not an ordinary measurement (rank.go)
	vals     []float64            // the ranked quantity, one value per run (noise.go)
	floor    float64              // the relative resolution of one run (noise.go)
	rounds   []float64            // the ranked quantity per round (plan rounds; 0: not measured that round)
	format   func(float64) string // writes the ranked quantity (nil: a rate)
	lower    bool                 // lower ranks first (CPU per request)

	limitedBy  string // the part that limited it (limits.go)
	limitedWhy string
}

// mark is one reason a row is not an ordinary measurement of its proxy.
type mark struct {
	sym   string // appended to the row's label in tables and charts ("†", "✗"); "" for none
	note  string // in the ranking: "generator-limited", "capped by the backend", "proxy died"
	leave bool   // the row is left out of the ranking
}

// markRule returns the mark row r earns, if any.
type markRule func(r *row) (mark, bool)
