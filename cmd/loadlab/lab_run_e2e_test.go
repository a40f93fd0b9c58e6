package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
)

// needNginxRoot skips tests that start real nginx proxies in namespaces.
func needNginxRoot(t *testing.T) {
	t.Helper()
	needProxyRoot(t, "nginx-stock")
}

// needProxyRoot skips tests that start the proxy of profile in namespaces
// as root: with -short, not as root, the proxy or ip(8) not installed.
func needProxyRoot(t *testing.T, profile string) {
	t.Helper()
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("starts real proxies as root in network namespaces (skipped with -short)")
	}
	p, err := proxy.Get(profile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Find(); err != nil {
		t.Skipf("%s not installed (scripts/install-proxies.sh): %v", p.Proxy, err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
}

// labRun writes planYAML into a fresh world-readable directory, runs
// `loadlab lab run` on it into DIR/out with the extra arguments, fails the
// test unless it exits 0, and returns the out directory, the results file
// and what the run printed.
func labRun(t *testing.T, planYAML string, extra ...string) (out string, f *results.File, stdout, stderr string) {
	t.Helper()
	dir := worldDir(t)
	planFile := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(planFile, []byte(planYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	code, stdout, stderr := runCLI(t, append([]string{"lab", "run", "--plan", planFile, "--out", out}, extra...)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, f, stdout, stderr
}

// tableRow matches a Markdown table row of profile whose second cell is a
// number (the rate found or achieved; over rounds, the median and its
// range).
func tableRow(profile string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\| ` + regexp.QuoteMeta(profile) + ` († )?\| (≥ )?[0-9][0-9,.]*( \([^|]*\))? \|.*\|$`)
}

// The CI run: the quick plan in one round (its three rounds' repeats are
// lab/scenario's tests; here they would triple the time), cut to
// nginx-stock and nginx-keepalive, its rate search (nginx-stock's: quick
// leaves nginx-keepalive out of it) and the sustained tests, every
// duration scaled to about a third; both rows must be in the report with
// numbers, and `loadlab report` must re-render the same report from
// results.json.
func TestLabRunEndToEnd(t *testing.T) {
	needNginxRoot(t)
	dir := worldDir(t)
	out := filepath.Join(dir, "out")
	code, yaml, stderr := runCLI(t, "lab", "plan", "show", "quick")
	if code != 0 || !strings.Contains(yaml, "\nrounds: 3\n") {
		t.Fatalf("plan show quick: exit %d, no 'rounds: 3' line: %s", code, stderr)
	}
	plan := filepath.Join(dir, "quick1.yaml")
	if err := os.WriteFile(plan, []byte(strings.Replace(yaml, "\nrounds: 3\n", "\nrounds: 1\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "lab", "run", "--plan", plan, "--out", out,
		"--profiles", "nginx-stock,nginx-keepalive", "--scenarios", "keepalive-1k,sustained-cliff,sustained-pool", "--step-scale", "0.34")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"estimated", "[1/~", "ETA", "lab session ready"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	sustained := string(md[strings.Index(string(md), "## sustained"):])
	for _, p := range []string{"nginx-stock", "nginx-keepalive"} {
		if !tableRow(p).MatchString(sustained) {
			t.Errorf("sustained table has no row with numbers for %s:\n%s", p, sustained)
		}
		if !strings.Contains(string(md), "| "+p+" ") || !strings.Contains(stdout, "| "+p+" ") {
			t.Errorf("%s missing from the report or the printed tables", p)
		}
	}
	var f results.File
	b, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if !f.Finished || len(f.Units) != 3 { // keepalive-1k and sustained-cliff on nginx-stock, sustained-pool on nginx-keepalive
		t.Fatalf("finished %v, %d units", f.Finished, len(f.Units))
	}
	for _, u := range f.Units {
		if u.Status != results.StatusDone || len(u.Steps) == 0 {
			t.Fatalf("unit %s: %s %s, %d steps", u.ID, u.Status, u.Reason, len(u.Steps))
		}
		for _, st := range u.Steps {
			if st.Result == nil || len(st.Result.Seconds) == 0 || len(st.Proxy) == 0 || !st.Backend.Valid {
				t.Fatalf("unit %s step %d lacks its samples", u.ID, st.Seq)
			}
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil || !strings.Contains(string(page), "data:image/png;base64,") {
		t.Fatalf("report.html without embedded charts: %v", err)
	}

	os.Remove(filepath.Join(out, "report.md"))
	if code, _, stderr := runCLI(t, "report", out, "-q"); code != 0 {
		t.Fatalf("loadlab report: exit %d: %s", code, stderr)
	}
	md2, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil || string(md2) != string(md) {
		t.Fatalf("re-rendered report differs (%v)", err)
	}
}

// Ctrl-C in the middle of a step: exit 130, the partial step recorded and
// marked interrupted, no namespace or cgroup left; the same command then
// resumes and finishes.
func TestLabRunSIGINTRecordsAndResumes(t *testing.T) {
	needNginxRoot(t)
	dir := worldDir(t)
	out := filepath.Join(dir, "out")
	// sustained-cliff runs once (rounds: 1): a 12 s step, whose start the
	// progress announces (from 10 s).
	args := []string{"lab", "run", "--plan", "quick", "--out", out, "--profiles", "nginx-stock", "--scenarios", "sustained-cliff", "-q"}
	cmd := cliCommand(t, args...)
	progress, done := startUntil(t, cmd, "sustained-cliff nginx-stock p256: run closed loop for")
	pid := cmd.Process.Pid
	time.Sleep(3 * time.Second) // into the 12 s run
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no exit within 60s of SIGINT:\n%s", progress.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d, want 130:\n%s", code, progress.text())
	}
	if ns := netnsOf(t, pid); ns != "" {
		t.Errorf("namespaces left: %s", ns)
	}
	if dirs := runCgroupDirs(t, pid); len(dirs) > 0 {
		t.Errorf("cgroups left: %v", dirs)
	}
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	u := f.Units[0]
	if u.Status != results.StatusInterrupted || len(u.Steps) != 1 || !u.Steps[0].Interrupted || u.Steps[0].Result == nil {
		t.Fatalf("after SIGINT: unit %s %s, steps %+v\n%s", u.Status, u.Reason, u.Steps, progress.text())
	}

	code, _, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "resuming the run") {
		t.Fatalf("no resume:\n%s", stderr)
	}
	f, err = results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	u = f.Units[0]
	if !f.Finished || u.Status != results.StatusDone || len(u.Steps) != 1 || u.Steps[0].Interrupted {
		t.Fatalf("after resume: finished %v, unit %s, steps %d", f.Finished, u.Status, len(u.Steps))
	}
}
