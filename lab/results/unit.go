package results

import (
	"time"

	"github.com/loadlab/loadlab/lab/search"
)

// Unit statuses.
const (
	StatusPending     = "pending"
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusInterrupted = "interrupted"
	StatusSkipped     = "skipped"
	StatusError       = "error"
)

// RateFrom is a fixed-rate unit's rate derived from a search of the run:
// Rate = Share x Found, Found being the rate Unit's search sustained.
type RateFrom struct {
	Unit  string  `json:"unit"`  // ID of the search unit
	Found float64 `json:"found"` // its rate found, req/s
	Share float64 `json:"share"`
	Rate  float64 `json:"rate"` // the rate offered here, req/s
}

// Unit is one scenario against one proxy profile with one key type on one
// layout.
type Unit struct {
	ID       string         `json:"id"`
	Scenario string         `json:"scenario"`
	Family   string         `json:"family"` // scenarios that differ only in server CPUs share a family (the first one's name)
	Kind     string         `json:"kind"`
	Method   string         `json:"method"`
	Profile  string         `json:"profile"`
	Proxy    string         `json:"proxy"`
	Key      string         `json:"key"`
	Layout   string         `json:"layout"`
	Status   string         `json:"status"`
	Reason   string         `json:"reason,omitempty"` // why skipped or failed
	Search   *search.Result `json:"search,omitempty"` // with runs > 1: the search of the median rate found (Searches[SearchRun-1])
	// Searches are every search of a scenario with runs > 1, in run
	// order; their steps carry run 1..N. Empty for one search.
	Searches  []*search.Result `json:"searches,omitempty"`
	SearchRun int              `json:"search_run,omitempty"` // which of Searches is Search (1-based)
	// VsControl is the unit's value in each round over its round's
	// control's (control.go): what drift of the machine moves alike in
	// both cancels out.
	VsControl *VsControl `json:"vs_control,omitempty"`
	// Remeasured are the unit's rounds measured again at the end of their
	// round because a step of theirs was noisy (Step.Noisy): the first
	// measurement's steps and searches, kept for the record; Steps and
	// Searches hold the second. Read as results, they are not.
	Remeasured []Remeasured `json:"remeasured,omitempty"`
	// RoundsDone counts the rounds whose part of the unit ran to its end
	// (plan rounds: a unit is done after its scenario's last round).
	RoundsDone int     `json:"rounds_done,omitempty"`
	Ceiling    string  `json:"ceiling,omitempty"`    // ID of the generator ceiling measured for this unit's scenario (File.Ceilings)
	MaxRate    float64 `json:"search_max,omitempty"` // the search's upper bound: the plan's max, or the ceiling when the generator bounded it
	// RateFrom, for a fixed-rate scenario with rate_from, is where its
	// rate came from in this run.
	RateFrom *RateFrom `json:"rate_from,omitempty"`
	Steps    []*Step   `json:"steps"`
	// LimitedBy is the part that limited the unit's reported step: for a
	// search the first failed step above the rate found (else the step its
	// row shows); fixed and closed rows read their own step's.
	LimitedBy  string    `json:"limited_by,omitempty"`
	LimitedWhy string    `json:"limited_by_why,omitempty"`
	ErrorLog   *ErrorLog `json:"error_log,omitempty"`
	Started    time.Time `json:"started"`
	Finished   time.Time `json:"finished"`
}

// ErrorLog counts known causes in the proxy's error log after the unit.
type ErrorLog struct {
	Lines   int               `json:"lines"`
	Causes  map[string]int    `json:"causes"`
	Samples map[string]string `json:"samples,omitempty"` // first line of each cause
	// CutLines counts lines longer than the buffer the log is read
	// through (64 KiB): each was judged by its start.
	CutLines int `json:"cut_lines,omitempty"`
}

// VsControl is a unit's value relative to the control of its own round,
// per round: a rate (a search's rate found, a closed loop's 2xx/s) over
// the control's closed-loop 2xx/s, or a fixed-rate run's p99 over the
// control's fixed-rate p99. Rounds[k-1] is round k's (0: not measured);
// Median is the median of those measured.
type VsControl struct {
	Metric string    `json:"metric"` // "rate" or "p99"
	Rounds []float64 `json:"rounds"`
	Median float64   `json:"median"`
}
