package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// h3Plan is quick's keep-alive pair on Caddy, cut short: the same
// search over HTTP/1.1 (keepalive-1k) and over HTTP/3 (kind h3), each
// with its generator ceiling, steps of 1 s.
const h3Plan = `
name: h3-pair
profiles: [caddy-stock]
net: netns
cpus: {server: "1"}
timeout: 5s
idle_memory: {quiet: 0s, samples: 0}
search: {start: 1000, max: 2000, precision: 0.5, step: 1s, discard: 250ms, confirm_runs: 1, confirm_step: 1s, max_step_downs: 1, cooldown_cap: 2s}
scenarios:
  - kind: keepalive-1k
    connections: 50
  - name: keepalive-1k-h3
    kind: h3
`

// An HTTP/3 search through Caddy runs end to end beside its HTTP/1.1
// one: every step of the h3 unit and of its generator ceiling (against
// loadlab serve --h3) spoke HTTP/3 and got 2xx, the HTTP/1.1 ones spoke
// HTTP/1.1, and the report and the printed tables set Caddy's two rows
// side by side in the Protocols table.
func TestLabRunH3BesideH1(t *testing.T) {
	needProxyRoot(t, "caddy-stock")
	out, f, stdout, _ := labRun(t, h3Plan)
	if !f.Finished || len(f.Units) != 2 || len(f.Ceilings) != 2 {
		t.Fatalf("finished %v, %d units (want 2), %d ceilings (want 2)", f.Finished, len(f.Units), len(f.Ceilings))
	}
	for _, u := range append(f.Units, f.Ceilings...) {
		if u.Status != results.StatusDone || len(u.Steps) == 0 {
			t.Fatalf("unit %s: %s %s, %d steps", u.ID, u.Status, u.Reason, len(u.Steps))
		}
		want := "http/1.1"
		if u.Kind == plan.KindH3 {
			want = "h3"
		}
		for _, st := range u.Steps {
			if st.Result == nil || st.Result.OK == 0 || st.Result.Protocol != want {
				t.Fatalf("unit %s step %d: %+v, want 2xx over %s", u.ID, st.Seq, st.Result, want)
			}
		}
	}
	// The HTTP/3 search is bounded by the generator's HTTP/3 ceiling, not
	// HTTP/1.1's: where the generator limited it, the search's max is it.
	for _, u := range f.Units {
		c := f.CeilingOf(u)
		if c == nil || c.Kind != u.Kind || c.Steps[0].Result.Protocol != u.Steps[0].Result.Protocol {
			t.Fatalf("unit %s: its ceiling %+v is not its own protocol's", u.ID, c)
		}
		if rate, byGen := c.CeilingRate(); byGen && rate < 2000 && u.MaxRate != rate {
			t.Errorf("unit %s: search max %g, want the generator's ceiling %g", u.ID, u.MaxRate, rate)
		}
		for _, st := range u.Steps {
			if st.Rate > u.MaxRate {
				t.Errorf("unit %s step %d at %g req/s, above its max %g", u.ID, st.Seq, st.Rate, u.MaxRate)
			}
		}
	}
	if c := f.Check("1cpu", "caddy-stock", "p256"); c == nil || !c.H3 || !c.H3Advertised {
		t.Errorf("caddy-stock's checks: %+v, want HTTP/3 served and advertised", c)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"report.md": string(md), "printed tables": stdout} {
		i := strings.Index(text, "## Protocols")
		if i < 0 {
			t.Errorf("%s has no Protocols table:\n%s", name, text)
			continue
		}
		for _, proto := range []string{"HTTP/1.1", "HTTP/3"} {
			row := regexp.MustCompile(`(?m)^\| caddy-stock († )?\| ` + regexp.QuoteMeta(proto) + ` \| (≥ )?[0-9][0-9,]* .*\|$`)
			if !row.MatchString(text[i:]) {
				t.Errorf("%s: the Protocols table has no %s row with a rate for caddy-stock:\n%s", name, proto, text[i:])
			}
		}
	}
}
