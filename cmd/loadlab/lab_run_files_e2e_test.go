package main

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// plainHTTPPlan is a plain-HTTP plan of both roles: a rate search through
// a proxy over http:// (with its generator ceiling against loadlab serve
// over http), and nginx serving a 100 KiB file itself with sendfile on and
// off, over HTTP and HTTPS.
const plainHTTPPlan = `
name: plain-http
profiles: [nginx-keepalive, nginx-files, nginx-files-nosendfile]
net: netns
cpus: {server: "1"}
timeout: 5s
idle_memory: {quiet: 0s, samples: 0}
search: {start: 1000, max: 4000, precision: 0.5, step: 2s, discard: 500ms, confirm_runs: 1, confirm_step: 2s, max_step_downs: 1, cooldown_cap: 2s}
scenarios:
  - name: proxied-http
    kind: keepalive-1k
    scheme: http
    connections: 20
  - name: files-100k-http
    role: origin
    kind: keepalive-1k
    method: closed
    size: 100k
    scheme: http
    connections: 20
    duration: 2s
    runs: 2
  - name: files-100k-https
    role: origin
    kind: keepalive-1k
    method: closed
    size: 100k
    connections: 20
    duration: 2s
    runs: 2
`

// A plain-HTTP plan runs end to end: every unit and the ceiling done, the
// http steps without TLS, the Serving files table and the sendfile
// finding printed.
func TestLabRunPlainHTTPAndFiles(t *testing.T) {
	needNginxRoot(t)
	_, f, stdout, _ := labRun(t, plainHTTPPlan, "--step-scale", "0.5")
	if !f.Finished || len(f.Units) != 5 || len(f.Ceilings) != 1 {
		t.Fatalf("finished %v, %d units (want 5), %d ceilings (want 1)", f.Finished, len(f.Units), len(f.Ceilings))
	}
	if c := f.Ceilings[0]; c.Status != results.StatusDone || c.Search == nil || c.Search.LastPass == 0 {
		t.Errorf("generator ceiling over http: %s %s %+v", c.Status, c.Reason, c.Search)
	}
	for _, u := range append(f.Units, f.Ceilings...) {
		if u.Status != results.StatusDone || len(u.Steps) == 0 {
			t.Fatalf("unit %s: %s %s, %d steps", u.ID, u.Status, u.Reason, len(u.Steps))
		}
		https := strings.HasPrefix(u.Scenario, "files-100k-https")
		for _, st := range u.Steps {
			if st.Result == nil || st.Result.OK == 0 {
				t.Fatalf("unit %s step %d: no 2xx", u.ID, st.Seq)
			}
			if (st.Result.TLS != nil) != https {
				t.Errorf("unit %s step %d: TLS %+v, want TLS only over https", u.ID, st.Seq, st.Result.TLS)
			}
		}
		if u.Profile == "nginx-files" && u.Steps[0].Backend.Requests != 0 {
			t.Errorf("unit %s: the backend served %d requests; an origin serves its files itself", u.ID, u.Steps[0].Backend.Requests)
		}
	}
	if s := f.Plan.Scenarios[1]; s.Path != "/100k" || s.Scheme != plan.SchemeHTTP || s.Role != plan.RoleOrigin {
		t.Errorf("recorded scenario %+v", s)
	}
	for _, want := range []string{
		"## Serving files", "| nginx-files | 100 KB | HTTP |", "| nginx-files-nosendfile | 100 KB | HTTPS |",
		"endfile", // the sendfile finding: an effect or none beyond the noise
	} {
		// A row whose generator had no time to spare is marked † (make
		// test saw nginx-files' 100 KB over HTTP at 25,877/s with the
		// generator's loop busy 88% + starved 2% on a shared machine): the
		// row is still there, and the mark is the report telling the truth.
		if !strings.Contains(stdout, want) && !strings.Contains(stdout, strings.Replace(want, " |", " † |", 1)) {
			t.Errorf("printed tables lack %q:\n%s", want, stdout)
		}
	}
}
