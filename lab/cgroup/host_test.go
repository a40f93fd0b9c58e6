package cgroup

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// hostManager returns a Manager on this host's v1 cgroups, or skips the
// test where they are not writable.
func hostManager(t *testing.T) *Manager {
	t.Helper()
	if v, err := Detect(); err != nil || v != V1 {
		t.Skipf("host cgroups are not v1 (%v, %v)", v, err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	m, err := NewManager("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
		for _, d := range m.RunDirs() {
			if exists(d) {
				t.Errorf("%s left after Cleanup", d)
			}
		}
	})
	return m
}

func TestHostV1Group(t *testing.T) {
	m := hostManager(t)
	g, err := m.Create("t1", Limits{CPUs: "1", MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	files := g.ProcsFiles()
	if len(files) != 3+len(v1Optional) {
		t.Fatalf("ProcsFiles = %v, want cpuset, memory, cpuacct, cpu", files)
	}
	dirs := map[string]string{}
	for i, c := range v1Controllers {
		dirs[c] = strings.TrimSuffix(files[i], "/cgroup.procs")
	}
	if got := readTrim(t, join(dirs["cpuset"], "cpuset.cpus")); got != "1" {
		t.Errorf("cpuset.cpus = %q", got)
	}
	if got := readTrim(t, join(dirs["memory"], "memory.limit_in_bytes")); got != strconv.Itoa(256<<20) {
		t.Errorf("memory.limit_in_bytes = %q", got)
	}
	s := startSleeper(t)
	for _, f := range files {
		if err := hostOps.write(f, strconv.Itoa(s.pid())); err != nil {
			t.Fatal(err)
		}
	}
	cg := readTrim(t, fmt.Sprintf("/proc/%d/cgroup", s.pid()))
	for _, c := range append(append([]string(nil), v1Controllers...), v1Optional...) {
		if !strings.Contains(cg, ":"+c+":") || !strings.Contains(cg, "/"+runDirOf(os.Getpid())+"/t1") {
			t.Errorf("/proc/%d/cgroup does not show t1 in %s:\n%s", s.pid(), c, cg)
		}
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Procs != 1 || st.Threads != 1 {
		t.Errorf("Stats = %+v, want 1 process, 1 thread", st)
	}
	if pids, _ := g.Pids(); len(pids) != 1 || pids[0] != s.pid() {
		t.Errorf("Pids = %v", pids)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	s.waitDead(t)
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if exists(d) {
			t.Errorf("%s left after Remove", d)
		}
	}
}

func TestHostRemoveStale(t *testing.T) {
	m := hostManager(t)
	dead := deadPid(t)
	// Build what a crashed run with pid `dead` would leave: its run dirs
	// with a group holding a live process.
	// The test's own prefix: lab runs beside it (lab/session's tests) sweep
	// dead runs' loadlab-<pid> directories too, and would take this one.
	const prefix = "loadlabg"
	old, err := resolve(Options{Pid: dead, Prefix: prefix}, hostOps)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.setupV1(); err != nil {
		t.Fatal(err)
	}
	g, err := old.Create("proxy", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = old.Cleanup() })
	s := startSleeper(t)
	for _, f := range g.ProcsFiles() {
		if err := hostOps.write(f, strconv.Itoa(s.pid())); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := RemoveStaleWith(Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	s.waitDead(t)
	for _, d := range old.RunDirs() {
		if exists(d) {
			t.Errorf("stale %s not removed (removed %v)", d, removed)
		}
	}
	for _, d := range m.RunDirs() {
		if !exists(d) {
			t.Errorf("our own %s was removed", d)
		}
	}
}
