package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/results"
)

// A backend under a CPU quota of 0.05 cores caps nginx-keepalive at a
// fixed 2,000 req/s (the backend serves about a thousand a second on that
// much CPU; nginx itself needs a tenth of a core): the step is limited by
// the backend, not the proxy, and the table says so.
func TestLabRunLimitedByBackend(t *testing.T) {
	needNginxRoot(t)
	dir := worldDir(t)
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(`name: backend-capped
profiles: [nginx-keepalive]
keys: [p256]
net: netns
cpus: {server: "1", backend_quota: 0.05}
timeout: 5s
idle_memory: {quiet: 0s, samples: 0, every: 0s}
scenarios:
  - kind: fixed-rate
    rates: [2000]
    runs: 1
    duration: 4s
    warmup: 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, "lab", "run", "--plan", planFile, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f results.File
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Units) != 1 || len(f.Units[0].Steps) != 1 {
		t.Fatalf("%d units: want one unit with one step", len(f.Units))
	}
	st := f.Units[0].Steps[0]
	t.Logf("limited by %s: %s; proxy %.2f cores, backend %.2f cores (quota %.2f, throttled %d of %d periods)", st.LimitedBy, st.LimitedWhy,
		st.ProxySum.CPUAvg, st.BackendSum.CPUAvg, st.BackendSum.CPUQuota, st.BackendSum.NrThrottled, st.BackendSum.NrPeriods)
	if st.BackendSum.Samples == 0 || st.BackendSum.CPUQuota != 0.05 {
		t.Errorf("backend samples %d, quota %.2f: want the backend's group sampled with its 0.05-core quota", st.BackendSum.Samples, st.BackendSum.CPUQuota)
	}
	if st.ProxySum.CPUAvg >= 0.9 {
		t.Errorf("the proxy used %.2f cores: the test needs it not busy", st.ProxySum.CPUAvg)
	}
	if st.LimitedBy != results.LimitBackend {
		t.Errorf("limited_by %q (%s), want backend", st.LimitedBy, st.LimitedWhy)
	}
	if !strings.Contains(stdout, "| backend |") {
		t.Errorf("the table's Limited by column does not say backend:\n%s", stdout)
	}
}
