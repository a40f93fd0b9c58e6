package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// A proxy killed 6 s into a step: its row is marked ✗, left out of the
// ranking (the run put it first), and a finding says who died how,
// when, and what failed after.
func TestProxyDiedRowMarkedAndFinding(t *testing.T) {
	f := synthFile(t)
	ok := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	dead := searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 12000)
	secs := []result.Second{{T: 4, OK: 20000}, {T: 5, OK: 20000}, {T: 6, OK: 5000, Errors: 15000}, {T: 7, Errors: 16024}}
	st := mkStep(len(dead.Steps)+1, spec{rate: 20000, verdict: string(search.Died), ok: 45000, bad: 31024, secs: secs})
	st.ProxyExit = &results.ProcessExit{T: 6.2, Signal: "SIGKILL", FailedAfter: 31024, Restarted: true}
	dead.Steps = append(dead.Steps, st)
	f.Units = append(f.Units, ok, dead)
	r, md := build(t, f)
	if !strings.Contains(md, "| nginx-keepalive ✗ |") {
		t.Errorf("row not marked ✗:\n%s", md)
	}
	if !strings.Contains(md, "Ranking by rate found: 1. nginx-stock 4,000 ±4% (left out, proxy died: nginx-keepalive)") {
		t.Errorf("ranking:\n%s", md)
	}
	want := "nginx-keepalive was killed by SIGKILL at t=6.2 s into keepalive-1k at 20,000 req/s; 31,024 requests failed after that; it was started again for the next step."
	if !strings.Contains(strings.Join(r.Findings, "\n"), want) {
		t.Errorf("finding %q not in:\n%s", want, strings.Join(r.Findings, "\n"))
	}
	// Without the death: no mark, no finding, ranked first.
	st.ProxyExit = nil
	r, md = build(t, f)
	if strings.Contains(md, "✗") || strings.Contains(strings.Join(r.Findings, "\n"), "SIGKILL") {
		t.Errorf("a live proxy marked or reported dead:\n%s", md)
	}
}

// The backend dying marks the row too, and an OOM kill says the limit.
func TestBackendDiedAndOOMWords(t *testing.T) {
	f := synthFile(t)
	f.Plan.MemoryLimit = 64 << 20
	u := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	u.Steps[0].BackendExit = &results.ProcessExit{T: 3, Signal: "SIGKILL", FailedAfter: 10}
	v := searchUnit("keepalive-1k", "caddy-stock", "p256", "1cpu", 5000)
	v.Steps[1].ProxyExit = &results.ProcessExit{T: 2, Signal: "SIGKILL", OOM: true, OOMKills: 1, Survived: true, FailedAfter: 7, Restarted: true}
	f.Units = append(f.Units, u, v, searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 9000))
	r, md := build(t, f)
	all := strings.Join(r.Findings, "\n")
	for _, want := range []string{
		"the backend was killed by SIGKILL at t=3 s into keepalive-1k",
		"caddy-stock had a process OOM-killed at t=2 s into keepalive-1k",
		"(the plan's memory limit of 64MiB)",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("finding %q not in:\n%s", want, all)
		}
	}
	if !strings.Contains(md, "1. nginx-keepalive 9,000 ±4% (left out, backend died: nginx-stock) (left out, proxy died: caddy-stock)") {
		t.Errorf("ranking:\n%s", md)
	}
}
