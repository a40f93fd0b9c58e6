package report

import (
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/browser"
	"github.com/loadlab/loadlab/lab/results"
)

// wideFile is fullFile with every cell at its widest: a generator ceiling
// (headroom words), HTTP/2 with the proxy's stream limit, kernel settings
// and a CPU quota in a label, the backend's CPU, a lag caveat and the
// reasons of a limit.
func wideFile(t *testing.T) *results.File {
	f := fullFile(t)
	ceil := searchUnit("keepalive-1k", "loadlab-serve", "p256", "1cpu", 32000)
	ceil.ID, ceil.Search.GeneratorLimited = "ceiling/keepalive-1k/p256/1cpu", true
	f.Ceilings = []*results.Unit{ceil}
	for _, u := range f.Units {
		if u.Scenario == "keepalive-1k" {
			u.Ceiling, u.MaxRate = ceil.ID, 32000
		}
		u.LimitedBy, u.LimitedWhy = results.LimitProxy, "the proxy used 0.97 cores on average of 1 CPU(s) (97%)"
		for _, st := range u.Steps {
			if st.Result == nil {
				continue
			}
			st.Result.Protocol, st.Result.Streams, st.Result.H2 = "h2", 100, &result.H2Info{ServerMaxStreams: 64}
			st.Result.Generator.Busy, st.Result.Generator.Starved = []float64{0.61, 0.4}, []float64{0.02, 0.01}
			st.Result.Generator.LagCaveats = []result.LagCaveat{{Quantile: "p99.9", LagUs: 1800, Share: 0.4}}
			st.Sysctls = map[string]string{"net.ipv4.tcp_tw_reuse": "1", "net.ipv4.tcp_max_tw_buckets": "8192"}
			st.LimitedBy, st.LimitedWhy = results.LimitProxy, "the proxy used 0.97 cores on average of 1 CPU(s) (97%)"
			for i := range st.Proxy {
				st.Proxy[i].CPUQuota, st.Proxy[i].NrPeriods, st.Proxy[i].NrThrottled, st.Proxy[i].ThrottledMs = 1, 2400, 310, 6200
				st.Proxy[i].Procs, st.Proxy[i].Threads = 5, 37
			}
			st.ProxySum = results.Summarize(st.Proxy, 0)
			st.BackendSamples = []results.ProxySample{{T: 1, CPU: 0.43}}
			st.BackendSum = results.Summarize(st.BackendSamples, 0)
		}
	}
	return f
}

// Opened in Chromium 1400 px wide, no table of the report is wider than
// the page's column or sticks out past its right edge.
func TestReportFitsTheScreen(t *testing.T) {
	browser.Need(t)
	for name, f := range map[string]*results.File{"wide": wideFile(t), "files": filesFile(t, seed003Runs()), "knobs": knobsFile(t), "protocols": protoWideFile(t)} {
		t.Run(name, func(t *testing.T) {
			r, err := Build(f)
			if err != nil {
				t.Fatal(err)
			}
			page, err := r.HTML()
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			fit, err := browser.FitHTML(ctx, page, browser.Options{Width: 1400})
			if err != nil {
				t.Fatal(err)
			}
			CheckFit(t, fit)
		})
	}
}

// CheckFit fails t for each table of fit wider than its box or the page.
func CheckFit(t *testing.T, fit *browser.Fit) {
	t.Helper()
	if fit.Window != 1400 || len(fit.Tables) == 0 {
		t.Fatalf("window %d px with %d tables: want 1400 px and the report's tables", fit.Window, len(fit.Tables))
	}
	for _, tb := range fit.Overflows() {
		t.Errorf("table %d %q is %.0f px wide, its right edge at %.0f px: the page has %.0f px (the column %.0f px)", tb.Index, tb.Caption, tb.Width, tb.Right, fit.PageWidth, tb.Room)
	}
	if fit.ScrollWidth > fit.PageWidth+0.5 {
		t.Errorf("the page scrolls sideways: %.0f px wide in a %.0f px window", fit.ScrollWidth, fit.PageWidth)
	}
	widest := fit.Tables[0]
	for _, tb := range fit.Tables {
		if tb.Width > widest.Width {
			widest = tb
		}
	}
	t.Logf("%d tables measured, page %.0f px, the widest %q %.0f px of %.0f", len(fit.Tables), fit.PageWidth, widest.Caption, widest.Width, widest.Room)
}

// Each scenario's main table keeps at most maxMainColumns columns, its
// detail table the rest of the same rows; the legend is said once, not
// under each table.
func TestMainTablesAndOneLegend(t *testing.T) {
	r, md := build(t, wideFile(t))
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range r.Sections {
		for i, tb := range sec.Tables {
			if !tb.Detail && len(tb.Header) > maxMainColumns {
				t.Errorf("%s, %s: %d columns, want at most %d", sec.Scenario, tb.Caption, len(tb.Header), maxMainColumns)
			}
			for _, row := range tb.Rows {
				if len(row) != len(tb.Header) {
					t.Errorf("%s, %s: row %q has %d cells for %d columns", sec.Scenario, tb.Caption, row, len(row), len(tb.Header))
				}
			}
			if tb.Detail {
				main := sec.Tables[i-1]
				if len(main.Rows) != len(tb.Rows) || tb.Header[0] != main.Header[0] {
					t.Errorf("%s: detail table %q does not follow its main table's rows", sec.Scenario, tb.Caption)
				}
				for j := range tb.Rows {
					if tb.Rows[j][0] != main.Rows[j][0] {
						t.Errorf("%s: detail row %d is %q, main row %q", sec.Scenario, j, tb.Rows[j][0], main.Rows[j][0])
					}
				}
			}
		}
	}
	if len(r.Legend) != 4 {
		t.Fatalf("legend %q, want the memory, Limited by, Throttled and headroom entries", r.Legend)
	}
	for _, l := range r.Legend {
		if n := strings.Count(md, l); n != 1 {
			t.Errorf("report.md says %q %d times, want once", l[:30], n)
		}
		if n := strings.Count(html.UnescapeString(string(page)), l); n != 1 {
			t.Errorf("report.html says %q %d times, want once", l[:30], n)
		}
	}
}
