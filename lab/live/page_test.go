package live

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/browser"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
	"github.com/loadlab/loadlab/pin"
)

const livePlan = `
name: live
profiles: [nginx-stock, caddy-stock]
keys: [p256]
scenarios:
  - kind: fixed-rate
    rates: [1000]
    runs: 1
    duration: 20s
`

// liveFile is an empty run of livePlan, as results.Open starts it.
func liveFile(t *testing.T) *results.File {
	t.Helper()
	p, err := plan.Parse([]byte(livePlan))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	return &results.File{Version: results.Version, Plan: p, Started: now, Updated: now,
		Machine: results.Machine{Hostname: "box", Kernel: "6.1", Net: "netns", Allowed: pin.NewCPUSet(0, 1, 2)},
		Layouts: []results.Layout{{ID: "1cpu", Request: "1", Plan: pin.Plan{Server: pin.NewCPUSet(0), Backend: pin.NewCPUSet(2), Gen: pin.NewCPUSet(1)}}}}
}

// record adds profile's one fixed-rate step to f, as the runner does.
func record(f *results.File, profile string, seq int) *results.Step {
	res := &result.Result{RequestedRate: 1000, AchievedRate: 1000, Requests: 20000, OK: 20000, DurationS: 20,
		Status: map[string]uint64{"200": 20000}, Errors: map[string]uint64{},
		Latency: result.Latency{P50: 400, P90: 900, P95: 1100, P99: 2100, P999: 4000, Max: 9000}, Protocol: "http/1.1",
		Seconds: []result.Second{{T: 0, OK: 1000}}}
	sample := results.ProxySample{T: 1, CPU: 0.3, Mem: 9 << 20, MemAnon: 7 << 20, MemKernel: 1 << 20, MemFile: 1 << 20}
	st := &results.Step{Seq: seq, Phase: results.PhaseRun, Rate: 1000, Run: 1, Connections: 50, Verdict: "pass", Result: res,
		Proxy: []results.ProxySample{sample}, ProxySum: results.Summarize([]results.ProxySample{sample}, 0),
		Spectrum: []results.SpectrumPoint{{P: 0, Us: 200}, {P: 50, Us: 400}, {P: 99, Us: 2100}, {P: 100, Us: 9000}}}
	proxy := strings.Split(profile, "-")[0]
	f.Units = append(f.Units, &results.Unit{ID: "fixed-rate/" + profile + "/p256/1cpu", Scenario: "fixed-rate", Family: "fixed-rate",
		Kind: plan.KindFixedRate, Method: plan.MethodFixed, Profile: profile, Proxy: proxy, Key: "p256", Layout: "1cpu",
		Status: results.StatusDone, Steps: []*results.Step{st}})
	f.Proxies = append(f.Proxies, results.ProxyInfo{Layout: "1cpu", Profile: profile, Proxy: proxy, Key: "p256", Version: proxy + " 1", IdleNeed: 5 << 20})
	return st
}

func info(profile string, done int) scenario.StepInfo {
	return scenario.StepInfo{Plan: "live", Scenario: "fixed-rate", Profile: profile, Key: "p256", Layout: "1cpu", Seq: 1,
		Phase: results.PhaseRun, Rate: 1000, Duration: 20 * time.Second, Done: done, Steps: 2, ETA: time.Duration(2-done) * 25 * time.Second,
		At: time.Date(2026, 12, 4, 12, 0, done*25, 0, time.UTC)}
}

// pageOf fetches the page over HTTP, loads the URL in headless Chromium
// (the DOM it built) and measures the fetched page's tables at 1400 px.
func pageOf(t *testing.T, url string) (body, dom string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: %d %s, %v", url, resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dom, err = browser.DumpDOM(ctx, url, browser.Options{Width: 1400})
	if err != nil {
		t.Fatal(err)
	}
	fit, err := browser.FitHTML(ctx, b, browser.Options{Width: 1400})
	if err != nil {
		t.Fatal(err)
	}
	if fit.Window != 1400 {
		t.Errorf("window %d px, want 1400", fit.Window)
	}
	for _, tb := range fit.Overflows() {
		t.Errorf("table %q is %.0f px wide (right edge %.0f) on a %.0f px page", tb.Caption, tb.Width, tb.Right, fit.PageWidth)
	}
	return string(b), dom
}

// Driven as the runner drives it, the page served over HTTP shows in
// Chromium the step now running with the ETA and the report so far, then
// the final report; at 1400 px no table is wider than the page.
func TestPageInChromium(t *testing.T) {
	browser.Need(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	p := &Page{Log: &log}
	srv := Serve(ln, p)
	defer srv.Shutdown(context.Background())
	f := liveFile(t)
	p.Begin(f)

	p.StepStart(info("nginx-stock", 0))
	_, dom := pageOf(t, srv.URL())
	for _, want := range []string{
		`<meta http-equiv="refresh" content="5">`,
		"Running: plan live, step 1 of about 2",
		"Now: fixed-rate on nginx-stock (p256, layout 1cpu): run at 1,000 req/s for 20s, started 12:00:00.",
		"Steps done: 0 of about 2. ETA: 50s (about 12:00)",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("during step 1 the page lacks %q", want)
		}
	}

	// the runner marks a unit done after its last step: the page shows a
	// running unit's steps so far, and leaves f as it is
	st := record(f, "nginx-stock", 1)
	f.Units[0].Status = results.StatusRunning
	p.StepDone(info("nginx-stock", 1), st, f)
	if f.Units[0].Status != results.StatusRunning {
		t.Fatal("the page changed the results file")
	}
	f.Units[0].Status = results.StatusDone
	p.StepStart(info("caddy-stock", 1))
	_, dom = pageOf(t, srv.URL())
	for _, want := range []string{
		"Running: plan live, step 2 of about 2",
		"Now: fixed-rate on caddy-stock (p256, layout 1cpu)",
		"Steps done: 1 of about 2. ETA: 25s",
		"<caption>Fixed rates</caption>",
		"<td>nginx-stock</td><td>1,000</td><td>1,000</td><td>400 µs</td>",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("during step 2 the page lacks %q", want)
		}
	}
	if strings.Contains(dom, "<td>caddy-stock</td>") {
		t.Error("the page shows caddy-stock's row before its step was recorded")
	}

	st = record(f, "caddy-stock", 1)
	p.StepDone(info("caddy-stock", 2), st, f)
	f.Finished = true
	p.End(f, nil, "finished", time.Date(2026, 12, 4, 12, 1, 0, 0, time.UTC))
	body, dom := pageOf(t, srv.URL())
	for _, want := range []string{"Run finished at 12:01:00: the final report", "<td>nginx-stock</td><td>1,000</td>", "<td>caddy-stock</td><td>1,000</td>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("after the run the page lacks %q", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the final page still reloads itself")
	}
	// the same report as report.html, under the banner
	rep, err := report.Build(f)
	if err != nil {
		t.Fatal(err)
	}
	final, _ := rep.HTML()
	if i, j := strings.Index(body, "<h1>"), bytes.Index(final, []byte("<h1>")); i < 0 || body[i:] != string(final[j:]) {
		t.Error("the final page's report is not report.html's")
	}
	if log.Len() > 0 {
		t.Errorf("log: %s", log.String())
	}
}

// Only / (and /report.html) is served, by GET or HEAD.
func TestPageServesOnlyThePage(t *testing.T) {
	p := &Page{}
	p.Begin(liveFile(t))
	for _, c := range []struct {
		method, path string
		code         int
	}{{"GET", "/", 200}, {"HEAD", "/", 200}, {"GET", "/report.html", 200}, {"GET", "/favicon.ico", 404}, {"POST", "/", 405}} {
		req, _ := http.NewRequest(c.method, "http://x"+c.path, nil)
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		if w.Code != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, w.Code, c.code)
		}
	}
}
