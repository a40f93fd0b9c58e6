package live

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
)

// Refresh is how often the live page reloads itself.
const Refresh = 5 * time.Second

// Page is the live report: a scenario.Observer that rebuilds the report
// after each step and serves its HTML (http.Handler). The runner calls
// the observer methods from its goroutine; requests read the cached bytes
// under the mutex, never the results file.
type Page struct {
	Log io.Writer // where a report that could not be rebuilt is said (nil: nowhere)

	mu    sync.Mutex
	rep   *report.Report // the report as of the last step recorded
	live  report.Live    // the banner
	html  []byte         // rep with live, rendered
	final bool           // the run ended: the final report, no more reloads
}

var (
	_ scenario.Observer = (*Page)(nil)
	_ http.Handler      = (*Page)(nil)
)

// Begin renders the report of f as it stands before the run (empty, or
// what a resumed run recorded). Call it before the runner starts.
func (p *Page) Begin(f *results.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rebuild(f, "before the run")
	p.live = report.Live{Refresh: Refresh, Title: "Starting: plan " + planName(f),
		Lines: []string{"The first step has not started yet; this page reloads every " + Refresh.String() + "."}}
	p.render()
}

// StepStart puts the step now running at the top of the page; the page
// does not observe the generator's run.
func (p *Page) StepStart(s scenario.StepInfo) gen.Observer {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.live = report.Live{Refresh: Refresh, Title: fmt.Sprintf("Running: plan %s, step %d of about %d", s.Plan, s.Done+1, max(s.Steps, s.Done+1)),
		Lines: []string{
			"Now: " + stepWords(s) + fmt.Sprintf(", started %s.", s.At.Format("15:04:05")),
			standing(s, s.Done),
			"The tables below are the run so far, rebuilt after each step; this page reloads every " + Refresh.String() + ".",
		}}
	p.render()
	return nil
}

// StepDone rebuilds the report from f, the whole run so far, and caches
// its page; f is read only during the call.
func (p *Page) StepDone(s scenario.StepInfo, st *results.Step, f *results.File) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rebuild(f, fmt.Sprintf("after step %d", s.Done))
	verdict := ""
	if st != nil && st.Verdict != "" {
		verdict = ": " + st.Verdict
	}
	p.live = report.Live{Refresh: Refresh, Title: fmt.Sprintf("Running: plan %s, step %d of about %d recorded, the next one starting", s.Plan, s.Done, max(s.Steps, s.Done)),
		Lines: []string{
			"Last: " + stepWords(s) + verdict + ".",
			standing(s, s.Done),
			"The tables below are the run so far, rebuilt after each step; this page reloads every " + Refresh.String() + ".",
		}}
	p.render()
}

// End shows the final report: rep (as written to report.html), or the
// report of f when rep is nil, under a banner saying how the run ended
// (how: "finished", "interrupted", ...). The page stops reloading.
func (p *Page) End(f *results.File, rep *report.Report, how string, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rep != nil {
		p.rep = rep
	} else {
		p.rebuild(f, "at the end")
	}
	p.live = report.Live{Title: "Run " + how + " at " + at.Format("15:04:05") + ": the final report",
		Lines: []string{"This is the report written to report.html; the page no longer reloads."}}
	p.final = true
	p.render()
}

// rebuild builds the report from f; on failure it keeps the last one and
// says so. It holds p.mu.
func (p *Page) rebuild(f *results.File, when string) {
	rep, err := build(f)
	if err != nil {
		if p.Log != nil {
			fmt.Fprintf(p.Log, "loadlab: live page: the report could not be rebuilt %s: %v (the page keeps the last one; report.html is written at the end as always)\n", when, err)
		}
		return
	}
	p.rep = rep
}

// build is report.Build of the run so far (soFar) that turns a panic into
// an error: the live page must never end the run it watches.
func build(f *results.File) (rep *report.Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			rep, err = nil, fmt.Errorf("report.Build panicked: %v", r)
		}
	}()
	return report.Build(soFar(f))
}

// soFar is f with the units still running shown as done with the steps
// they have recorded, so the page has their rows while they go (the
// report shows only finished units; the runner marks a unit done after
// its last step). It copies what it changes: f stays as it is.
func soFar(f *results.File) *results.File {
	if f == nil {
		return nil
	}
	var units []*results.Unit
	for i, u := range f.Units {
		if u.Status != results.StatusRunning || !measured(u) {
			continue
		}
		if units == nil {
			units = slices.Clone(f.Units)
		}
		c := *u
		c.Status = results.StatusDone
		units[i] = &c
	}
	if units == nil {
		return f
	}
	g := *f
	g.Units = units
	return &g
}

// measured reports whether u has a step with a result.
func measured(u *results.Unit) bool {
	for _, st := range u.Steps {
		if st.Result != nil {
			return true
		}
	}
	return false
}

// render renders the cached report with the banner. It holds p.mu.
func (p *Page) render() {
	if p.rep == nil {
		p.html = []byte("<!DOCTYPE html><html><head><meta http-equiv=\"refresh\" content=\"5\"><title>loadlab</title></head><body><p>No report yet.</p></body></html>")
		return
	}
	live := p.live
	page, err := p.rep.LiveHTML(&live)
	if err != nil {
		if p.Log != nil {
			fmt.Fprintf(p.Log, "loadlab: live page: render: %v (the page keeps the last one)\n", err)
		}
		return
	}
	p.html = page
}

// HTML returns the page as served now.
func (p *Page) HTML() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.html
}

// ServeHTTP serves the page at / (GET and HEAD); anything else is 404.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" && r.URL.Path != "/"+report.HTMLFile {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "GET or HEAD only", http.StatusMethodNotAllowed)
		return
	}
	page := p.HTML()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", fmt.Sprint(len(page)))
	if r.Method == http.MethodGet {
		_, _ = w.Write(page) // a browser that went away: nothing to do
	}
}

// stepWords says which step: "keepalive-1k on nginx-stock (p256, layout
// 1cpu), round 2: probe at 4,000 req/s for 20s".
func stepWords(s scenario.StepInfo) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s (%s, layout %s)", s.Scenario, s.Profile, s.Key, s.Layout)
	if s.Round > 0 {
		fmt.Fprintf(&b, ", round %d", s.Round)
	}
	what := "closed loop"
	if s.Rate > 0 {
		what = "at " + units.Rate(s.Rate) + " req/s"
	}
	fmt.Fprintf(&b, ": %s %s for %s", s.Phase, what, scenario.FormatDuration(s.Duration))
	return b.String()
}

// standing says where the run stands: steps done and the ETA.
func standing(s scenario.StepInfo, done int) string {
	return fmt.Sprintf("Steps done: %d of about %d. ETA: %s (about %s), from the plan's budget.",
		done, max(s.Steps, done), scenario.FormatDuration(s.ETA), s.At.Add(s.ETA).Format("15:04"))
}

// planName is f's plan's name, "" without one.
func planName(f *results.File) string {
	if f == nil || f.Plan == nil {
		return ""
	}
	return f.Plan.Name
}
