package cgroup

import (
	"os"
	"strings"
	"testing"
)

// A v1 group with a CPU quota joins the cpu hierarchy (mounted on its own,
// as on this machine), gets cpu.cfs_period_us 100000 and
// cpu.cfs_quota_us = cores x 100000, and Stats reads the quota back with
// cpu.stat's throttling counters.
func TestFakeV1Quota(t *testing.T) {
	k := newFakeTree(t, V1)
	m, err := newManager(Options{Root: k.root, SelfCgroup: "4:memory:/\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/\n"}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	if !m.CanQuota() {
		t.Fatal("CanQuota false with the cpu hierarchy mounted")
	}
	run := runDirOf(os.Getpid())
	g, err := m.Create("proxy", Limits{CPUs: "0-1", CPUQuota: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	dir := join(k.root, "cpu", run, "proxy")
	if got := readTrim(t, join(dir, "cpu.cfs_period_us")); got != "100000" {
		t.Errorf("cpu.cfs_period_us = %q", got)
	}
	if got := readTrim(t, join(dir, "cpu.cfs_quota_us")); got != "150000" {
		t.Errorf("cpu.cfs_quota_us = %q, want 150000", got)
	}
	if pf := g.ProcsFiles(); len(pf) != 4 || !strings.HasPrefix(pf[3], join(k.root, "cpu")) {
		t.Errorf("ProcsFiles %v: want the cpu hierarchy's last", pf)
	}
	writeFile(t, join(dir, "cpu.stat"), "nr_periods 40\nnr_throttled 12\nthrottled_time 345000000\n")
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUQuota != 1.5 || st.NrPeriods != 40 || st.NrThrottled != 12 || st.ThrottledNanos != 345000000 {
		t.Errorf("Stats %+v", st)
	}
	// A group without a quota reads 0 (cfs_quota_us -1).
	g2, err := m.Create("backend", Limits{CPUs: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g2.Stats(); err != nil || st.CPUQuota != 0 {
		t.Errorf("no quota: %+v %v", st, err)
	}
	for _, q := range []float64{-1, 2000} {
		if _, err := m.Create("bad", Limits{CPUQuota: q}); err == nil || !strings.Contains(err.Error(), "bad CPU quota") {
			t.Errorf("quota %g: %v", q, err)
		}
	}
}

// Without the cpu hierarchy a quota is refused by name; other groups work.
func TestFakeV1QuotaWithoutCPUHierarchy(t *testing.T) {
	k := newFakeTree(t, V1)
	m, err := newManager(Options{Root: k.root, SelfCgroup: "4:memory:/\n3:cpuset:/\n2:cpuacct:/\n"}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	if m.CanQuota() {
		t.Fatal("CanQuota true without cpu")
	}
	if _, err := m.Create("proxy", Limits{CPUQuota: 1}); err == nil || !strings.Contains(err.Error(), "cpu controller") {
		t.Fatalf("err %v", err)
	}
	if _, err := m.Create("proxy", Limits{}); err != nil {
		t.Fatal(err)
	}
}

// v2: the cpu controller is enabled when the parent offers it, a quota is
// written to cpu.max ("150000 100000") and read back with cpu.stat's
// nr_periods, nr_throttled and throttled_usec.
func TestFakeV2Quota(t *testing.T) {
	k := newFakeTree(t, V2)
	m, err := newManager(Options{Root: k.root}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	run := runDirOf(os.Getpid())
	if got := readTrim(t, join(k.root, run, "cgroup.subtree_control")); got != "cpuset memory cpu" {
		t.Errorf("run dir subtree_control = %q", got)
	}
	if !m.CanQuota() {
		t.Fatal("CanQuota false")
	}
	g, err := m.Create("proxy", Limits{CPUQuota: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := join(k.root, run, "proxy")
	if got := readTrim(t, join(dir, "cpu.max")); got != "100000 100000" {
		t.Errorf("cpu.max = %q", got)
	}
	writeFile(t, join(dir, "cpu.stat"), "usage_usec 900\nuser_usec 800\nsystem_usec 100\nnr_periods 10\nnr_throttled 3\nthrottled_usec 25000\n")
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.CPUQuota != 1 || st.NrPeriods != 10 || st.NrThrottled != 3 || st.ThrottledNanos != 25_000_000 || st.CPUNanos != 900_000 {
		t.Errorf("Stats %+v", st)
	}
	g2, err := m.Create("backend", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := g2.Stats(); err != nil || st.CPUQuota != 0 {
		t.Errorf("no quota (cpu.max max): %+v %v", st, err)
	}
}

// v2 without the cpu controller offered: groups work, a quota is refused.
func TestFakeV2QuotaWithoutCPU(t *testing.T) {
	k := newFakeTree(t, V2)
	writeFile(t, join(k.root, "cgroup.controllers"), "cpuset memory pids")
	m, err := newManager(Options{Root: k.root}, k.ops())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	if m.CanQuota() {
		t.Fatal("CanQuota true")
	}
	if _, err := m.Create("proxy", Limits{CPUQuota: 1}); err == nil || !strings.Contains(err.Error(), "cpu controller") {
		t.Fatalf("err %v", err)
	}
}
