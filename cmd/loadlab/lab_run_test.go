package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

func TestLabPlanShow(t *testing.T) {
	for _, name := range plan.BuiltinNames() {
		code, out, errs := runCLI(t, "lab", "plan", "show", name)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		p, err := plan.Parse([]byte(out))
		if err != nil {
			t.Fatalf("%s: output is not a plan: %v", name, err)
		}
		if err := p.Check(); err != nil || p.Name != name {
			t.Fatalf("%s: %v (name %q)", name, err, p.Name)
		}
	}
	file := filepath.Join(t.TempDir(), "my.yaml")
	os.WriteFile(file, []byte("name: mine\nprofiles: [nginx-stock]\nscenarios:\n  - kind: handshake\n    search: {start: 50}\n"), 0o644)
	code, out, errs := runCLI(t, "lab", "plan", "show", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"name: mine", "confirm_runs: 3", "start: 50", "kind: handshake", "p99: 1s"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show %s lacks %q:\n%s", file, want, out)
		}
	}
	if code, _, errs := runCLI(t, "lab", "plan", "show", "nope"); code != 2 || !strings.Contains(errs, "quick") {
		t.Fatalf("unknown plan: exit %d: %s", code, errs)
	}
}

func TestLabRunRejectsBadInputBeforeWork(t *testing.T) {
	dir := t.TempDir()
	bad := func(body string) string {
		f := filepath.Join(dir, "p"+string(rune('a'+len(body)%26))+".yaml")
		os.WriteFile(f, []byte(body), 0o644)
		return f
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", bad("name: x\nprofiles: [nginx-bogus]\nscenarios: [{kind: keepalive-1k}]\n")}, `unknown profile "nginx-bogus"`},
		{[]string{"--plan", bad("name: x\nprofiles: [nginx-stock]\nscenarios: [{kind: fixed-rate, rates: [-1500]}]\n")}, "is not a rate"},
		{[]string{"--plan", bad("name: x\nprofiles: [nginx-stock]\nsearch: {discard: -1s}\nscenarios: [{kind: keepalive-1k}]\n")}, "discard must be"},
		{[]string{"--scenarios", "warp"}, "--scenarios: warp is not in plan quick"},
		{[]string{"--profiles", "h2o"}, "--profiles: h2o is not in plan quick"},
		{[]string{"--keys", "rsa2048"}, "--keys: rsa2048 is not used by plan quick"},
		{[]string{"--step-scale", "-1"}, "--step-scale"},
		{[]string{"--step-scale", "1e-15"}, "must be > 0"},
		{[]string{"--net", "bridge"}, "--net"},
		{[]string{"--server-cpus", "x-y"}, "--server-cpus"},
		{[]string{"--memory", "lots"}, "--memory"},
		{[]string{"--plan", "nope"}, "no built-in plan or file"},
	} {
		args := append([]string{"lab", "run", "--out", filepath.Join(dir, "out")}, tc.args...)
		code, _, errs := runCLI(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q (want exit 2 and %q)", tc.args, code, errs, tc.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: error is not one line: %q", tc.args, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Fatal("a rejected run created its output directory")
	}
}

func TestLabRunDryRunShowsBudget(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := runCLI(t, "lab", "run", "--plan", "seed-2026", "--out", out, "--dry-run", "--profiles", "nginx-npm,nginx-keepalive", "--server-cpus", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"plan seed-2026 into " + out, "profiles (nginx-npm, nginx-keepalive)", "estimated", "layout 1cpu", "from --server-cpus"} {
		if !strings.Contains(errs, want) {
			t.Errorf("dry run lacks %q:\n%s", want, errs)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a dry run created its output directory")
	}
}

func TestReportCommandErrors(t *testing.T) {
	if code, _, errs := runCLI(t, "report", filepath.Join(t.TempDir(), "none")); code != 2 || !strings.Contains(errs, "not a directory") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, errs := runCLI(t, "report", t.TempDir()); code != 2 || !strings.Contains(errs, "results.json") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if code, _, _ := runCLI(t, "report"); code != 2 {
		t.Fatalf("no argument: exit %d", code)
	}
}

func TestReportCommandRendersResults(t *testing.T) {
	dir := t.TempDir()
	p, err := plan.Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	store, _, err := results.Open(dir, p, results.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := &results.Step{Seq: 1, Phase: "run", Run: 1, Verdict: "pass", Connections: 100,
		Result: &result.Result{AchievedRate: 4321, Requests: 86420, OK: 86420, Latency: result.Latency{P50: 700, P95: 1500, P99: 2500},
			Seconds: []result.Second{{T: 0, OK: 4321}, {T: 1, OK: 4321}}},
		Spectrum: []results.SpectrumPoint{{P: 0, Us: 300}, {P: 50, Us: 700}, {P: 99, Us: 2500}, {P: 100, Us: 4000}},
		Proxy:    []results.ProxySample{{T: 1, CPU: 0.5, Mem: 8 << 20, TimeWait: 3}}}
	st.ProxySum = results.Summarize(st.Proxy, 0)
	store.F.Units = []*results.Unit{{ID: "sustained-pool/nginx-keepalive/p256/1cpu", Scenario: "sustained-pool", Kind: "sustained", Method: "closed",
		Profile: "nginx-keepalive", Proxy: "nginx", Key: "p256", Layout: "1cpu", Status: results.StatusDone, Steps: []*results.Step{st}}}
	store.F.Finished = true
	if err := store.Save(); err != nil {
		t.Fatal(err)
	}
	store.Close()
	code, out, errs := runCLI(t, "report", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// The main table: what a reader compares; the detail table under it: the
	// rest of the row, ending with the first failure.
	for _, row := range []string{
		"| nginx-keepalive | 4,321 | 700 µs | 1.50 ms | 2.50 ms | 0% | 3 | 0.50 cores | - | - |",
		"| nginx-keepalive | - | - | 8.0 MiB | - | - | ok | - | - | none |",
	} {
		if !strings.Contains(out, row) {
			t.Fatalf("no row %q in tables:\n%s", row, out)
		}
	}
	for _, name := range []string{"report.md", "report.html", "charts/sustained-pool-spectrum.png"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}
