package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/pidstate"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

// faultPlan is a plan for the fault tests: one closed-loop sustained run
// per profile, in namespaces, with memory limit mem.
func faultPlan(t *testing.T, dir string, profiles, mem string, conns int, dur string) string {
	t.Helper()
	p := filepath.Join(dir, "plan.yaml")
	y := "name: faults\nprofiles: [" + profiles + "]\nkeys: [p256]\nnet: netns\nmemory_limit: " + mem + "\n" +
		"cpus:\n  server: \"1\"\ntimeout: 2s\nidle_memory:\n  quiet: 1s\n  samples: 1\n  every: 1s\n" +
		"scenarios:\n  - name: sustained-fault\n    kind: sustained\n    connections: " + strconv.Itoa(conns) + "\n    duration: " + dur + "\n"
	if err := os.WriteFile(p, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// proxyPids lists the processes in the first non-empty cgroup of the run
// whose name starts with profile- (v1 memory hierarchy:
// loadlab-<pid>/<profile>-...: a proxy, or "backend"), and its name.
func proxyPids(t *testing.T, labPid int, profile string) (string, []int) {
	t.Helper()
	for _, d := range runCgroupDirs(t, labPid) {
		if !strings.Contains(d, "/memory/") {
			continue
		}
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if !e.IsDir() || !strings.HasPrefix(e.Name(), profile+"-") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(d, e.Name(), "cgroup.procs"))
			if err != nil {
				continue
			}
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(f); err == nil {
					pids = append(pids, n)
				}
			}
			if len(pids) > 0 {
				return e.Name(), pids
			}
		}
	}
	return "", nil
}

// killMidStep runs a fault plan of profiles with one dur-long sustained
// step, and once progress shows want, waits after, then SIGKILLs every
// process (at least min) of the run's first cgroup named victim-...: the
// run must still finish with status 0. It returns the run's progress and
// output directory.
func killMidStep(t *testing.T, profiles, dur, want string, after time.Duration, victim string, min int) (*lineWatcher, string) {
	t.Helper()
	dir := worldDir(t)
	out := filepath.Join(dir, "out")
	cmd := cliCommand(t, "lab", "run", "--plan", faultPlan(t, dir, profiles, "2GiB", 50, dur), "--out", out, "-q")
	progress, done := startUntil(t, cmd, want)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
	})
	time.Sleep(after)
	group, pids := proxyPids(t, cmd.Process.Pid, victim)
	if len(pids) < min {
		t.Fatalf("%s's cgroup %q holds %v, want at least %d processes\n%s", victim, group, pids, min, progress.text())
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		t.Fatalf("no exit within 120 s of the kill:\n%s", progress.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, progress.text())
	}
	return progress, out
}

// Every nginx process of the first unit is SIGKILLed a few seconds into its
// 12 s step (the fault): the run still finishes with status 0, the
// step records proxy_exit (SIGKILL, not OOM, restarted), the row is marked
// ✗ and left out of the ranking, and a finding names who died, how, when
// and what failed after. The second unit runs normally and ranks.
func TestLabRunProxyKilledMidStep(t *testing.T) {
	needNginxRoot(t)
	progress, out := killMidStep(t, "nginx-keepalive128, nginx-keepalive", "12s",
		"sustained-fault nginx-keepalive128 p256: run closed loop for", 4*time.Second, "nginx-keepalive128", 2)
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var dead, alive *results.Unit
	for _, u := range f.Units {
		switch u.Profile {
		case "nginx-keepalive128":
			dead = u
		case "nginx-keepalive":
			alive = u
		}
	}
	if dead == nil || alive == nil || len(dead.Steps) != 1 || len(alive.Steps) != 1 {
		t.Fatalf("units %+v", f.Units)
	}
	x := dead.Steps[0].ProxyExit
	if x == nil || x.Signal != "SIGKILL" || x.OOM || x.ExitCode != nil || !x.Restarted || x.T < 2 || x.T > 10 || x.FailedAfter == 0 {
		t.Fatalf("proxy_exit %+v\n%s", x, progress.text())
	}
	if dead.Status != results.StatusDone || dead.Steps[0].Verdict != string(search.Died) || dead.Steps[0].BackendExit != nil {
		t.Errorf("dead unit %s, step verdict %s, backend_exit %+v", dead.Status, dead.Steps[0].Verdict, dead.Steps[0].BackendExit)
	}
	if alive.Steps[0].ProxyExit != nil || alive.Steps[0].BackendExit != nil {
		t.Errorf("the second unit reported a death: %+v %+v", alive.Steps[0].ProxyExit, alive.Steps[0].BackendExit)
	}
	for _, want := range []string{"nginx-keepalive128 was killed by SIGKILL at t=", "restarted nginx-keepalive128 for the next step"} {
		if !strings.Contains(progress.text(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress.text())
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	for _, want := range []string{
		"| nginx-keepalive128 ✗ |",
		"nginx-keepalive128 was killed by SIGKILL at t=",
		"requests failed after that; it was started again for the next step; the row is marked ✗ and left out of the rankings.",
		"(left out, proxy died: nginx-keepalive128)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "nginx-keepalive128") && (strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "- ")) {
			t.Logf("%s", l)
		}
	}
}

// The backend (loadlab serve) SIGKILLed mid-step: backend_exit on the
// step, the backend started again, the row marked "backend died".
func TestLabRunBackendKilledMidStep(t *testing.T) {
	needNginxRoot(t)
	progress, out := killMidStep(t, "nginx-keepalive128", "10s", "run closed loop for", 3*time.Second, "backend", 1)
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	st := f.Units[0].Steps[0]
	x := st.BackendExit
	if x == nil || x.Signal != "SIGKILL" || !x.Restarted || x.T < 1 || x.T > 9 || st.ProxyExit != nil {
		t.Fatalf("backend_exit %+v, proxy_exit %+v\n%s", x, st.ProxyExit, progress.text())
	}
	if !strings.Contains(progress.text(), "restarted the backend for the next step") {
		t.Errorf("progress does not say the backend restarted:\n%s", progress.text())
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| nginx-keepalive128 ✗ |", "the backend was killed by SIGKILL at t="} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// A memory limit the proxy exceeds under load (12 MiB, 400 TLS
// connections; nginx needs ~6 MiB idle): the kernel OOM-kills its workers,
// and the step says oom: true.
func TestLabRunProxyOOMKilled(t *testing.T) {
	needNginxRoot(t)
	dir := worldDir(t)
	out := filepath.Join(dir, "out")
	planFile := faultPlan(t, dir, "nginx-keepalive128", "12MiB", 400, "6s")
	code, _, stderr := runCLI(t, "lab", "run", "--plan", planFile, "--out", out, "-q")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f, err := results.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Units) != 1 || len(f.Units[0].Steps) != 1 {
		t.Fatalf("units %+v", f.Units)
	}
	x := f.Units[0].Steps[0].ProxyExit
	if x == nil || !x.OOM || x.OOMKills == 0 || x.Signal != "SIGKILL" {
		t.Fatalf("proxy_exit %+v, want oom: true\n%s", x, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "OOM-killed at t=") || !strings.Contains(string(md), "(the plan's memory limit of 12MiB)") {
		t.Errorf("report lacks the OOM finding:\n%s", md)
	}
}

// labLeftovers says what of run pid is still on the host: processes in its
// cgroups, its cgroup directories, its namespaces and links ("" = none).
func labLeftovers(t *testing.T, pid int) string {
	t.Helper()
	var s []string
	if p := pidsInRunCgroups(pid); len(p) > 0 {
		s = append(s, "processes "+fmtInts(p))
	}
	if d := runCgroupDirs(t, pid); len(d) > 0 {
		s = append(s, "cgroups "+strings.Join(d, " "))
	}
	if ns := netnsOf(t, pid); ns != "" {
		s = append(s, "namespaces "+ns)
	}
	if out, err := exec.Command("ip", "-br", "link").CombinedOutput(); err == nil {
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 0 && (strings.HasPrefix(f[0], "ll"+strconv.Itoa(pid)+"-") || strings.HasPrefix(f[0], "llbr"+strconv.Itoa(pid)+"-")) {
				s = append(s, "link "+f[0])
			}
		}
	}
	return strings.Join(s, "; ")
}

func fmtInts(v []int) string {
	var s []string
	for _, n := range v {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

// startKillable starts a 20 s sustained lab run and returns once its step
// is under way, with the run's pid and the nginx workers it started. Its
// cleanup removes whatever a failed test left (`lab cleanup`, then SIGKILL
// to anything still in the run's cgroups).
func startKillable(t *testing.T, extra ...string) (cmd *exec.Cmd, progress *lineWatcher, done chan error, workers []int) {
	t.Helper()
	dir := worldDir(t)
	planFile := faultPlan(t, dir, "nginx-keepalive128", "2GiB", 50, "20s")
	cmd = cliCommand(t, append([]string{"lab", "run", "--plan", planFile, "--out", filepath.Join(dir, "out"), "-q"}, extra...)...)
	progress, done = startUntil(t, cmd, "run closed loop for")
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-done
		}
		if left := labLeftovers(t, pid); left != "" {
			runCLI(t, "lab", "cleanup")
			for _, p := range pidsInRunCgroups(pid) {
				_ = syscall.Kill(p, syscall.SIGKILL)
			}
		}
	})
	time.Sleep(2 * time.Second)
	// The workers are the nginx master's children (with or without
	// cgroups); the master is the run's child.
	for _, m := range childPids(pid) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(m) + "/cmdline"); err == nil && strings.Contains(string(b), "nginx: master") {
			for _, w := range childPids(m) {
				if b, err := os.ReadFile("/proc/" + strconv.Itoa(w) + "/cmdline"); err == nil && strings.Contains(string(b), "worker") {
					workers = append(workers, w)
				}
			}
		}
	}
	if len(workers) == 0 {
		t.Fatalf("no nginx worker among the run's grandchildren\n%s", progress.text())
	}
	return cmd, progress, done, workers
}

// kill -9 of `lab run` mid-step: the reaper (parent-death signal SIGTERM)
// kills what outlived the run (nginx's workers: the master died of its own
// parent-death signal) and removes the cgroups, namespaces, bridge and
// veths, within seconds and without another run.
func TestLabRunKill9LeavesNothing(t *testing.T) {
	needNginxRoot(t)
	cmd, progress, done, workers := startKillable(t)
	pid := cmd.Process.Pid
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("kill -9 did not end the run within 30 s")
	}
	deadline := time.Now().Add(20 * time.Second)
	for labLeftovers(t, pid) != "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := labLeftovers(t, pid); left != "" {
		t.Fatalf("20 s after kill -9 the run left: %s\n%s", left, progress.text())
	}
	for _, w := range workers {
		if pidstate.Alive(w) { // a zombie (reparented, not yet reaped) is dead
			t.Errorf("nginx worker %d survived", w)
		}
	}
	if !strings.Contains(progress.text(), "died; removed what it left:") {
		t.Errorf("the reaper did not say what it removed:\n%s", progress.text())
	}
}

// The same without cgroups: the reaper kills the process groups the run
// told it about (nginx's workers are in their master's group).
func TestLabRunKill9NoCgroups(t *testing.T) {
	needNginxRoot(t)
	cmd, progress, done, workers := startKillable(t, "--no-cgroups")
	pid := cmd.Process.Pid
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	deadline := time.Now().Add(20 * time.Second)
	alive := func() []int {
		var out []int
		for _, w := range workers {
			if pidstate.Alive(w) {
				out = append(out, w)
			}
		}
		return out
	}
	for (len(alive()) > 0 || netnsOf(t, pid) != "") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if a := alive(); len(a) > 0 {
		for _, w := range a {
			_ = syscall.Kill(w, syscall.SIGKILL)
		}
		t.Fatalf("nginx workers %v survived kill -9 of a --no-cgroups run\n%s", a, progress.text())
	}
	if ns := netnsOf(t, pid); ns != "" {
		t.Fatalf("namespaces left: %s", ns)
	}
	if !strings.Contains(progress.text(), "process group") {
		t.Errorf("the reaper did not say it killed a process group:\n%s", progress.text())
	}
}

// The run and its reaper both killed: the workers, cgroups and namespaces
// stay until `loadlab lab cleanup` lists and removes them.
func TestLabCleanupAfterRunAndReaperKilled(t *testing.T) {
	needNginxRoot(t)
	cmd, progress, done, workers := startKillable(t)
	pid := cmd.Process.Pid
	reaper := 0
	for _, p := range childPids(pid) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); strings.Contains(string(b), "__reaper") {
			reaper = p
		}
	}
	if reaper == 0 {
		t.Fatalf("no reaper among the run's children %v", childPids(pid))
	}
	_ = syscall.Kill(reaper, syscall.SIGKILL)
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	time.Sleep(time.Second)
	left := labLeftovers(t, pid)
	if left == "" {
		t.Fatalf("with the reaper killed too, nothing was left: the test proves nothing\n%s", progress.text())
	}
	// --dry-run lists them and leaves them, workers included.
	code, stdout, stderr := runCLI(t, "lab", "cleanup", "--dry-run")
	if code != 0 || !strings.Contains(stdout, "would remove ll"+strconv.Itoa(pid)+"-") || strings.Contains(stdout, "removed ") {
		t.Fatalf("lab cleanup --dry-run: exit %d: %s %s", code, stdout, stderr)
	}
	if still := labLeftovers(t, pid); still != left {
		t.Fatalf("lab cleanup --dry-run removed something: before %s, after %s", left, still)
	}
	for _, w := range workers {
		if !pidstate.Alive(w) {
			t.Fatalf("nginx worker %d killed by lab cleanup --dry-run", w)
		}
	}
	code, stdout, stderr = runCLI(t, "lab", "cleanup")
	if code != 0 {
		t.Fatalf("lab cleanup: exit %d: %s %s", code, stdout, stderr)
	}
	if left := labLeftovers(t, pid); left != "" {
		t.Fatalf("after lab cleanup: %s\n%s", left, stdout)
	}
	for _, want := range []string{"removed /sys/fs/cgroup/", "removed ll" + strconv.Itoa(pid) + "-"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("lab cleanup output lacks %q:\n%s", want, stdout)
		}
	}
	for _, w := range workers {
		if pidstate.Alive(w) { // a zombie (reparented, not yet reaped) is dead
			t.Errorf("nginx worker %d survived lab cleanup", w)
		}
	}
	if code, stdout, _ := runCLI(t, "lab", "cleanup"); code != 0 || !strings.Contains(stdout, "nothing left by dead lab runs") {
		t.Errorf("second lab cleanup: exit %d: %s", code, stdout)
	}
}

// childPids lists the processes whose parent is pid.
func childPids(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if n, err := strconv.Atoi(e.Name()); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
