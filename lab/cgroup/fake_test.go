package cgroup

import (
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loadlab/loadlab/internal/pidstate"
)

func TestFakeV1CreateJoinStatsRemove(t *testing.T) {
	k := newFakeTree(t, V1)
	// We sit in memory:/session, at the top of cpuset and cpuacct.
	if err := k.mkdir(join(k.root, "memory", "session")); err != nil {
		t.Fatal(err)
	}
	m, err := newManager(Options{Root: k.root, SelfCgroup: "4:memory:/session\n3:cpuset:/\n2:cpuacct:/\n"}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	run := runDirOf(os.Getpid())
	if got := readTrim(t, join(k.root, "cpuset", run, "cpuset.cpus")); got != "0-1" {
		t.Errorf("run dir cpuset.cpus = %q, want the parent's 0-1", got)
	}
	g, err := m.Create("proxy", Limits{CPUs: "1", MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{
		join(k.root, "cpuset", run, "proxy", "cgroup.procs"),
		join(k.root, "memory", "session", run, "proxy", "cgroup.procs"),
		join(k.root, "cpuacct", run, "proxy", "cgroup.procs"),
	}
	if got := g.ProcsFiles(); strings.Join(got, " ") != strings.Join(wantFiles, " ") {
		t.Fatalf("ProcsFiles = %v, want %v", got, wantFiles)
	}
	if got := readTrim(t, join(k.root, "cpuset", run, "proxy", "cpuset.mems")); got != "0" {
		t.Errorf("cpuset.mems = %q, want the parent's 0", got)
	}
	if got := readTrim(t, join(k.root, "memory", "session", run, "proxy", "memory.limit_in_bytes")); got != "268435456" {
		t.Errorf("memory.limit_in_bytes = %q", got)
	}
	// A process joins as the wrapper does; the fake kernel refuses if the
	// cpuset was left without cpus or mems.
	s := startSleeper(t)
	for _, f := range g.ProcsFiles() {
		if err := k.write(f, strconv.Itoa(s.pid())); err != nil {
			t.Fatalf("join %s: %v", f, err)
		}
	}
	dir := join(k.root, "memory", "session", run, "proxy")
	writeFile(t, join(dir, "memory.usage_in_bytes"), "52428800")
	writeFile(t, join(dir, "memory.max_usage_in_bytes"), "60000000")
	writeFile(t, join(dir, "memory.stat"), "cache 100\nrss 50000000\ntotal_cache 4096\ntotal_rss 51000000\n")
	writeFile(t, join(dir, "memory.kmem.usage_in_bytes"), "1400000")
	writeFile(t, join(k.root, "cpuacct", run, "proxy", "cpuacct.usage"), "123456789")
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{CPUNanos: 123456789, MemCurrent: 52428800, MemAnon: 51000000, MemKernel: 1400000, MemFile: 4096, MemPeak: 60000000, Procs: 1, Threads: 1}
	if st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	if pids, _ := g.Pids(); len(pids) != 1 || pids[0] != s.pid() {
		t.Errorf("Pids = %v, want [%d]", pids, s.pid())
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	s.waitDead(t)
	for _, f := range wantFiles {
		if exists(f) {
			t.Errorf("%s still exists after Remove", f)
		}
	}
	if err := m.Cleanup(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"cpuset", "memory/session", "cpuacct"} {
		if exists(join(k.root, c, run)) {
			t.Errorf("run dir left in %s", c)
		}
	}
	if err := m.Cleanup(); err != nil {
		t.Errorf("second Cleanup: %v", err)
	}
	if _, err := m.Create("again", Limits{}); err == nil {
		t.Error("Create after Cleanup succeeded")
	}
}

func TestFakeV1BadLimits(t *testing.T) {
	k := newFakeTree(t, V1)
	m, err := newManager(Options{Root: k.root}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	_, err = m.Create("g", Limits{CPUs: "7"})
	if err == nil || !strings.Contains(err.Error(), "allows CPUs 0-1") {
		t.Fatalf("CPU outside the parent's set: err = %v", err)
	}
	if exists(join(k.root, "cpuset", runDirOf(os.Getpid()), "g")) {
		t.Error("failed Create left its directory")
	}
	for _, l := range []Limits{{CPUs: "x"}, {Mems: "1-0"}, {MemoryBytes: -1}} {
		if _, err := m.Create("g", l); err == nil {
			t.Errorf("Create with %+v accepted", l)
		}
	}
	for _, n := range []string{"", "a/b", "..", strings.Repeat("x", 65)} {
		if _, err := m.Create(n, Limits{}); err == nil {
			t.Errorf("Create(%q) accepted", n)
		}
	}
	if _, err := m.Create("dup", Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("dup", Limits{}); err == nil {
		t.Error("second Create with the same name accepted")
	}
}

func TestPermissionDeniedMessage(t *testing.T) {
	k := newFakeTree(t, V1)
	ops := k.ops()
	ops.mkdir = func(dir string) error { return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.EACCES} }
	_, err := newManager(Options{Root: k.root}, ops)
	want := "cannot create cgroup under " + join(k.root, "cpuset") + ": permission denied; run as root or use --no-cgroups"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
}

// v2 with our process alone in a non-root cgroup: the manager must move
// itself into a leaf before it can enable controllers, and move back.
func TestFakeV2Relocates(t *testing.T) {
	k := newFakeTree(t, V2)
	self := join(k.root, "user.slice", "session-1.scope")
	if err := k.write(join(k.root, "cgroup.subtree_control"), "+cpuset +memory +pids"); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{join(k.root, "user.slice"), self} {
		if err := k.mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.write(join(k.root, "user.slice", "cgroup.subtree_control"), "+cpuset +memory"); err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	if err := k.write(join(self, "cgroup.procs"), me); err != nil {
		t.Fatal(err)
	}
	m, err := newManager(Options{Root: k.root, SelfCgroup: "0::/user.slice/session-1.scope\n"}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	run := runDirOf(os.Getpid())
	if got := readTrim(t, join(self, run+"-self", "cgroup.procs")); got != me {
		t.Errorf("self leaf holds %q, want our pid %s", got, me)
	}
	if got := readTrim(t, join(self, "cgroup.subtree_control")); got != "cpuset memory" {
		t.Errorf("scope subtree_control = %q", got)
	}
	if got := readTrim(t, join(self, run, "cgroup.subtree_control")); got != "cpuset memory" {
		t.Errorf("run dir subtree_control = %q", got)
	}
	g, err := m.Create("backend", Limits{CPUs: "0", MemoryBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	dir := join(self, run, "backend")
	if got := readTrim(t, join(dir, "cpuset.cpus")); got != "0" {
		t.Errorf("cpuset.cpus = %q", got)
	}
	if got := readTrim(t, join(dir, "cpuset.mems")); got != "" {
		t.Errorf("cpuset.mems = %q, want empty (inherit)", got)
	}
	if got := readTrim(t, join(dir, "memory.max")); got != "1073741824" {
		t.Errorf("memory.max = %q", got)
	}
	s := startSleeper(t)
	if err := k.write(g.ProcsFiles()[0], strconv.Itoa(s.pid())); err != nil {
		t.Fatal(err)
	}
	writeFile(t, join(dir, "cpu.stat"), "usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n")
	writeFile(t, join(dir, "memory.current"), "7000000")
	writeFile(t, join(dir, "memory.peak"), "9000000")
	writeFile(t, join(dir, "memory.stat"), "anon 6000000\nfile 1000000\nkernel 12\n")
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{CPUNanos: 2500000, MemCurrent: 7000000, MemAnon: 6000000, MemKernel: 12, MemFile: 1000000, MemPeak: 9000000, Procs: 1, Threads: 1}
	if st != want {
		t.Errorf("Stats = %+v, want %+v", st, want)
	}
	// Without memory.peak (before Linux 5.19) the peak reads 0.
	os.Remove(join(dir, "memory.peak"))
	if st, err := g.Stats(); err != nil || st.MemPeak != 0 {
		t.Errorf("Stats without memory.peak = %+v, %v", st, err)
	}
	if err := m.Cleanup(); err != nil {
		t.Fatal(err)
	}
	s.waitDead(t)
	if exists(dir) || exists(join(self, run)) || exists(join(self, run+"-self")) {
		t.Error("groups left after Cleanup")
	}
	if got := readTrim(t, join(self, "cgroup.procs")); got != me {
		t.Errorf("after Cleanup our cgroup holds %q, want %s", got, me)
	}
	if got := readTrim(t, join(self, "cgroup.subtree_control")); got != "" {
		t.Errorf("after Cleanup subtree_control = %q, want empty", got)
	}
}

func TestFakeV2AtRootAndErrors(t *testing.T) {
	k := newFakeTree(t, V2)
	m, err := newManager(Options{Root: k.root}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create("g", Limits{CPUs: "1", Mems: "0"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if exists(join(k.root, runDirOf(os.Getpid()))) {
		t.Error("run dir left")
	}

	// Another process shares our cgroup: no relocation, a clear error.
	k = newFakeTree(t, V2)
	_ = k.write(join(k.root, "cgroup.subtree_control"), "+cpuset +memory")
	self := join(k.root, "shared")
	_ = k.mkdir(self)
	other := startSleeper(t)
	_ = k.write(join(self, "cgroup.procs"), strconv.Itoa(other.pid()))
	_, err = newManager(Options{Root: k.root, SelfCgroup: "0::/shared\n"}, k.ops())
	if err == nil || !strings.Contains(err.Error(), "holds other processes") || !strings.Contains(err.Error(), "--no-cgroups") {
		t.Errorf("shared cgroup: err = %v", err)
	}
	if exists(join(self, runDirOf(os.Getpid())+"-self")) {
		t.Error("failed setup left a self leaf")
	}

	// Controllers not delegated.
	k = newFakeTree(t, V2)
	_ = k.write(join(k.root, "cgroup.subtree_control"), "+pids")
	_ = k.mkdir(join(k.root, "nodeleg"))
	_, err = newManager(Options{Root: k.root, SelfCgroup: "0::/nodeleg\n"}, k.ops())
	if err == nil || !strings.Contains(err.Error(), "cpuset,memory are not available") {
		t.Errorf("undelegated: err = %v", err)
	}
}

func TestFakeRemoveStale(t *testing.T) {
	k := newFakeTree(t, V2)
	dead, alive := deadPid(t), startSleeper(t)
	_ = k.write(join(k.root, "cgroup.subtree_control"), "+cpuset +memory")
	mk := func(p ...string) string {
		d := join(append([]string{k.root}, p...)...)
		if err := k.mkdir(d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	staleRun := mk(runDirOf(dead))
	_ = k.write(join(staleRun, "cgroup.subtree_control"), "+memory")
	staleGroup := mk(runDirOf(dead), "proxy")
	orphan := startSleeper(t) // a worker that outlived its crashed run
	if err := k.write(join(staleGroup, "cgroup.procs"), strconv.Itoa(orphan.pid())); err != nil {
		t.Fatal(err)
	}
	staleSelf := mk(runDirOf(dead) + "-self")
	liveRun := mk(runDirOf(alive.pid()))
	ours := mk(runDirOf(os.Getpid()))
	unrelated := mk("loadlab-x")

	// Listed first (lab cleanup --dry-run): the same two, nothing removed,
	// the orphan still running.
	found, err := scanStale(Options{Root: k.root}, k.ops(), false)
	if err != nil || len(found) != 2 || found[0] != staleRun && found[1] != staleRun {
		t.Errorf("found %v (%v), want the stale run dir and self leaf", found, err)
	}
	for _, d := range []string{staleRun, staleGroup, staleSelf} {
		if !exists(d) {
			t.Errorf("%s removed by the listing", d)
		}
	}
	if !pidstate.Alive(orphan.pid()) {
		t.Error("the listing killed the orphan")
	}

	removed, err := removeStale(Options{Root: k.root}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	orphan.waitDead(t)
	if len(removed) != 2 {
		t.Errorf("removed %v, want the stale run dir and self leaf", removed)
	}
	for _, d := range []string{staleRun, staleSelf} {
		if exists(d) {
			t.Errorf("%s not removed", d)
		}
	}
	for _, d := range []string{liveRun, ours, unrelated} {
		if !exists(d) {
			t.Errorf("%s removed, but it is not stale", d)
		}
	}
}

func TestDetectTree(t *testing.T) {
	if v, err := detectTree(newFakeTree(t, V2).root); v != V2 || err != nil {
		t.Errorf("v2 tree: %v %v", v, err)
	}
	if v, err := detectTree(newFakeTree(t, V1).root); v != V1 || err != nil {
		t.Errorf("v1 tree: %v %v", v, err)
	}
	if _, err := detectTree(t.TempDir()); err == nil {
		t.Error("empty dir detected as a cgroup tree")
	}
	if _, err := NewManager(t.TempDir()); err == nil {
		t.Error("NewManager on an empty dir succeeded")
	}
}

// Before Linux 5.18 memory.stat has no "kernel" line: its parts are added.
func TestKernelOfSumsPartsOnOlderKernels(t *testing.T) {
	parts := map[string]uint64{"anon": 1 << 20, "file": 1 << 30, "slab": 300, "kernel_stack": 40, "pagetables": 5, "percpu": 6, "sock": 7, "vmalloc": 8, "sec_pagetables": 9}
	if got := kernelOf(parts); got != 375 {
		t.Errorf("kernelOf(parts) = %d, want 375 (slab, stacks, page tables, percpu, sock, vmalloc; not anon or file)", got)
	}
	parts["kernel"] = 1000
	if got := kernelOf(parts); got != 1000 {
		t.Errorf("kernelOf with a kernel line = %d, want 1000", got)
	}
}
