package compare

import "math"

// Metric is one compared quantity.
type Metric string

// The compared metrics, in output order.
const (
	Rate   Metric = "rate"   // 2xx/s (a search: the rate found)
	P50    Metric = "p50"    // corrected latency, µs
	P99    Metric = "p99"    // corrected latency, µs
	P999   Metric = "p99.9"  // corrected latency, µs
	Errors Metric = "errors" // share of requests failed or non-2xx
	CPU    Metric = "cpu"    // proxy CPU, cores (lab)
	Mem    Metric = "mem"    // proxy memory under load, anon+kernel bytes (lab)
)

// Metrics are all metrics in output order.
var Metrics = []Metric{Rate, P50, P99, P999, Errors, CPU, Mem}

// higherBetter reports whether a higher value of m is an improvement.
func higherBetter(m Metric) bool { return m == Rate }

// Verdicts.
const (
	Faster = "faster"
	Slower = "slower"
	Higher = "higher"
	Lower  = "lower"
	Noise  = "within noise"
	NoData = "no data"
	// Other is a search row's metric measured at each side's own rate
	// found, which differ: shown, not judged.
	Other = "at other rates"
	// Boundary is a search row's metric at the same rate found on both
	// sides: measured at the search's boundary, shown, not judged.
	Boundary = "at the boundary"
	OnlyInA  = "only in A"
	OnlyInB  = "only in B"
)

// Bases.
const (
	BasisRuns      = "runs"       // U test over the runs' values
	BasisPerSecond = "per-second" // U test over the runs' seconds, and the floor
	BasisValues    = "values"     // no test: ranges widened by the floor
)

// Result is one metric of one row.
type Result struct {
	Metric    Metric   `json:"metric"`
	A         float64  `json:"a"` // median of A's runs
	B         float64  `json:"b"`
	RunsA     int      `json:"runs_a"`
	RunsB     int      `json:"runs_b"`
	SecondsA  int      `json:"seconds_a,omitempty"` // per-second values the test used
	SecondsB  int      `json:"seconds_b,omitempty"`
	Ratio     *float64 `json:"ratio"` // B/A; null when A is 0 and B is not
	RatioLo   *float64 `json:"ratio_lo,omitempty"`
	RatioHi   *float64 `json:"ratio_hi,omitempty"`
	CILevel   float64  `json:"ci_level,omitempty"`
	BoundLo   *float64 `json:"bound_lo,omitempty"` // searches: the ratio B/A their brackets allow
	BoundHi   *float64 `json:"bound_hi,omitempty"`
	Basis     string   `json:"basis"`
	Floor     float64  `json:"floor"` // the change a difference must exceed (per-second and values bases)
	P         *float64 `json:"p,omitempty"`
	PAdj      *float64 `json:"p_adj,omitempty"`     // P, Holm-corrected across the row's tested metrics: the verdict's p
	PAdjAll   *float64 `json:"p_adj_all,omitempty"` // P, Holm-corrected across every test of the comparison: the summary's p
	Tested    bool     `json:"tested"`              // a significance test ran
	Different bool     `json:"different"`           // the verdict is not "within noise"
	// DifferentAll: what the summary counts: different, and when tested,
	// also significant after Holm across every test of the comparison.
	DifferentAll bool   `json:"different_all"`
	Worse        bool   `json:"worse"`       // different, and B is the worse
	Verdict      string `json:"verdict"`     // faster, slower, higher, lower, within noise, no data
	BasisWords   string `json:"basis_words"` // the basis in words

	// gate: a tested metric's other conditions for a difference (beyond
	// the floor, the seconds' ratio agreeing, the runs' ranges apart),
	// which the Holm-corrected test must join.
	gate bool
	// constant: every value the test used, on both sides, is one number:
	// its p is 1 whatever the noise, so it cannot reject and is left out
	// of the Holm families (it would only dilute them).
	constant bool
}

// Change is B/A - 1 (+Inf when A is 0 and B is not; 0 for no data).
func (r Result) Change() float64 {
	if r.Ratio == nil {
		if r.B > r.A {
			return math.Inf(1)
		}
		return 0
	}
	return *r.Ratio - 1
}

// RowResult is one row's metrics.
type RowResult struct {
	Key     string   `json:"row"`
	Method  string   `json:"method,omitempty"`
	Only    string   `json:"only,omitempty"` // "A" or "B": the other side lacks the row
	Tests   int      `json:"tests"`          // tested metrics: the family each p_adj is corrected over
	Metrics []Result `json:"metrics"`
	// Ran says, for lab rows, what differed in what ran: the profile's
	// config templates, its binary, its profile file (empty when the two
	// runs ran the same, or did not record it).
	Ran []string `json:"ran_differs,omitempty"`
}

// Different lists the row's metrics that differ.
func (r RowResult) Different() []Result {
	var out []Result
	for _, m := range r.Metrics {
		if m.Different {
			out = append(out, m)
		}
	}
	return out
}

// SideInfo says what a side held.
type SideInfo struct {
	Arg    string   `json:"arg"`
	Kind   string   `json:"kind"`
	Inputs []string `json:"inputs"`
}

// Report is a whole comparison.
type Report struct {
	A     SideInfo `json:"a"`
	B     SideInfo `json:"b"`
	Floor float64  `json:"floor"`
	Alpha float64  `json:"alpha"`
	// Correction is how the tests' p are corrected for multiple
	// comparisons: "holm" (Holm–Bonferroni within each row for the
	// verdicts, across all Tests of the comparison for the summary).
	Correction string       `json:"correction"`
	Tests      int          `json:"tests"` // tested metrics of the whole comparison: the summary's family
	Rows       []RowResult  `json:"rows"`
	Checks     []RuleResult `json:"fail_if,omitempty"`
	Failed     bool         `json:"failed"` // a --fail-if rule found a real regression
}

// RuleResult is a rule checked against a comparison.
type RuleResult struct {
	Rule   string   `json:"rule"`
	Failed bool     `json:"failed"`
	Rows   []string `json:"rows,omitempty"` // where it fired, with the change
}

// Rule is one --fail-if check: a metric's change B/A-1 beyond a
// threshold, e.g. p99>+10% (p99 more than 10% higher) or rate<-5% (2xx/s
// more than 5% lower).
type Rule struct {
	Metric    Metric  `json:"metric"`
	Op        string  `json:"op"`        // ">" or "<"
	Percent   float64 `json:"percent"`   // as written: +10 for +10%
	Threshold float64 `json:"threshold"` // the share: +0.10 for +10%
}
