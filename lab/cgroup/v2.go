package cgroup

import (
	"errors"
	"fmt"
	"github.com/loadlab/loadlab/internal/fields"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// v2Group is a leaf group in the unified hierarchy.
type v2Group struct {
	name string
	ops  fsOps
	dir  string
}

// setupV2 makes the controllers the lab needs available to its groups: they
// must be listed in our cgroup's cgroup.controllers, get enabled in its
// cgroup.subtree_control and in the run directory's. A non-root v2 group
// that holds processes cannot enable controllers for children (EBUSY), so
// when our cgroup holds only this process, it moves itself into a leaf
// loadlab-<pid>-self first; Cleanup moves it back.
func (m *Manager) setupV2() error {
	h := m.hiers[0]
	avail, err := m.ops.get(h.parent, "cgroup.controllers")
	if err != nil {
		return fields.Errorf("cannot read %s: %v; run without cgroups ({NoCgroups})", filepath.Join(h.parent, "cgroup.controllers"), bare(err))
	}
	if miss := missing(strings.Fields(avail), v2Controllers); len(miss) > 0 {
		return fields.Errorf("cgroup v2 controllers %s are not available in %s; run loadlab in a cgroup with them delegated or without cgroups ({NoCgroups})", strings.Join(miss, ","), h.parent)
	}
	want := append([]string(nil), v2Controllers...)
	for _, c := range v2Optional {
		if contains(strings.Fields(avail), c) {
			want = append(want, c)
		}
	}
	on, err := m.ops.get(h.parent, "cgroup.subtree_control")
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", filepath.Join(h.parent, "cgroup.subtree_control"), bare(err))
	}
	if need := missing(strings.Fields(on), want); len(need) > 0 {
		err := m.ops.write(filepath.Join(h.parent, "cgroup.subtree_control"), plus(need))
		if errors.Is(err, syscall.EBUSY) {
			if err = m.relocate(h.parent); err == nil {
				err = m.ops.write(filepath.Join(h.parent, "cgroup.subtree_control"), plus(need))
			}
		}
		if err != nil {
			if m.relocated != "" {
				_ = m.undoRelocation()
			}
			if errors.Is(err, syscall.EBUSY) {
				return fmt.Errorf("cannot enable %s in %s: it holds other processes and cgroup v2 keeps processes in leaf groups only; start loadlab in its own cgroup (systemd-run --scope -p Delegate=yes loadlab ...) or use --no-cgroups", strings.Join(need, ","), filepath.Join(h.parent, "cgroup.subtree_control"))
			}
			return writeErr(filepath.Join(h.parent, "cgroup.subtree_control"), plus(need), err)
		}
		if m.relocated != "" {
			m.enabled = need
		}
	}
	if err := m.makeBase(h); err != nil {
		if m.relocated != "" {
			_ = m.undoRelocation()
		}
		return err
	}
	if err := m.ops.set(h.base, "cgroup.subtree_control", plus(want)); err != nil {
		m.removeBases(m.hiers)
		if m.relocated != "" {
			_ = m.undoRelocation()
		}
		return err
	}
	m.v2cpu = contains(want, "cpu")
	return nil
}

// relocate moves this process from parent into the leaf parent/loadlab-<pid>-self
// when it is the only process there; anything else is left to the caller's
// EBUSY message.
func (m *Manager) relocate(parent string) error {
	pids, err := m.ops.ids(parent, "cgroup.procs")
	if err != nil {
		return err
	}
	if len(pids) != 1 || pids[0] != m.pid {
		return syscall.EBUSY
	}
	leaf := filepath.Join(parent, m.runDirName()+"-self")
	if err := m.ops.mkdir(leaf); err != nil && !errors.Is(err, fs.ErrExist) {
		return mkdirErr(parent, err)
	}
	if err := m.ops.set(leaf, "cgroup.procs", strconv.Itoa(m.pid)); err != nil {
		_ = m.ops.removeDir(leaf, 0)
		return err
	}
	m.relocated = leaf
	return nil
}

// undoRelocation switches off what relocation let us enable, moves this
// process back into its own cgroup and removes the leaf.
func (m *Manager) undoRelocation() error {
	parent := filepath.Dir(m.relocated)
	if len(m.enabled) > 0 {
		if err := m.ops.set(parent, "cgroup.subtree_control", minus(m.enabled)); err != nil {
			return err
		}
		m.enabled = nil
	}
	if err := m.ops.set(parent, "cgroup.procs", strconv.Itoa(m.pid)); err != nil {
		return err
	}
	if err := m.ops.removeDir(m.relocated, removeWithin); err != nil {
		return err
	}
	m.relocated = ""
	return nil
}

func missing(have, want []string) []string {
	var out []string
	for _, w := range want {
		if !contains(have, w) {
			out = append(out, w)
		}
	}
	return out
}

func plus(ctrls []string) string  { return prefixAll("+", ctrls) }
func minus(ctrls []string) string { return prefixAll("-", ctrls) }

func prefixAll(p string, ctrls []string) string {
	out := make([]string, len(ctrls))
	for i, c := range ctrls {
		out[i] = p + c
	}
	return strings.Join(out, " ")
}

// createV2 makes a leaf group; an empty cpuset.cpus or cpuset.mems in v2
// means "the parent's", so only given limits are written.
func (m *Manager) createV2(name string, l Limits) (Group, error) {
	h := m.hiers[0]
	g := &v2Group{name: name, ops: m.ops, dir: filepath.Join(h.base, name)}
	if err := m.ops.mkdir(g.dir); err != nil {
		return nil, mkdirErr(h.base, err)
	}
	sets := [][2]string{{"cpuset.cpus", l.CPUs}, {"cpuset.mems", l.Mems}}
	if l.MemoryBytes > 0 {
		sets = append(sets, [2]string{"memory.max", strconv.FormatInt(l.MemoryBytes, 10)})
	}
	if l.CPUQuota > 0 {
		sets = append(sets, [2]string{"cpu.max", fmt.Sprintf("%d %d", quotaMicros(l.CPUQuota), QuotaPeriodMicros)})
	}
	for _, kv := range sets {
		if kv[1] == "" {
			continue
		}
		if err := m.ops.set(g.dir, kv[0], kv[1]); err != nil {
			_ = m.ops.removeDir(g.dir, 0)
			return nil, err
		}
	}
	return g, nil
}

// Name returns the name given to Create.
func (g *v2Group) Name() string { return g.name }

// ProcsFiles returns the group's one cgroup.procs.
func (g *v2Group) ProcsFiles() []string { return []string{filepath.Join(g.dir, "cgroup.procs")} }

// Stats reads cpu.stat usage_usec, memory.current, memory.peak (0 before
// Linux 5.19), memory.stat anon, file and kernel, and counts cgroup.procs and
// cgroup.threads.
func (g *v2Group) Stats() (Stats, error) {
	var s Stats
	cpu, err := g.ops.keyed(g.dir, "cpu.stat")
	if err != nil {
		return s, err
	}
	s.CPUNanos = cpu["usage_usec"] * 1000
	// nr_periods, nr_throttled and throttled_usec are there with the cpu
	// controller enabled; cpu.max is "max 100000" without a quota.
	s.NrPeriods, s.NrThrottled, s.ThrottledNanos = cpu["nr_periods"], cpu["nr_throttled"], cpu["throttled_usec"]*1000
	if mx, err := g.ops.get(g.dir, "cpu.max"); err == nil {
		if f := strings.Fields(mx); len(f) == 2 {
			q, _ := strconv.ParseInt(f[0], 10, 64) // "max" = none
			p, _ := strconv.ParseInt(f[1], 10, 64)
			s.CPUQuota = coresOf(q, p)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	if s.MemCurrent, err = g.ops.number(g.dir, "memory.current"); err != nil {
		return s, err
	}
	if s.MemPeak, err = g.ops.number(g.dir, "memory.peak"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	st, err := g.ops.keyed(g.dir, "memory.stat")
	if err != nil {
		return s, err
	}
	s.MemAnon, s.MemFile, s.MemKernel = st["anon"], st["file"], kernelOf(st)
	procs, err := g.ops.ids(g.dir, "cgroup.procs")
	if err != nil {
		return s, err
	}
	threads, err := g.ops.ids(g.dir, "cgroup.threads")
	if err != nil {
		return s, err
	}
	s.Procs, s.Threads = len(procs), len(threads)
	return s, nil
}

// kernelOf is memory.stat's "kernel" (Linux 5.18+), else the sum of the
// kernel parts older kernels list: slab, kernel_stack, pagetables,
// sec_pagetables, percpu, sock and vmalloc.
func kernelOf(st map[string]uint64) uint64 {
	if k, ok := st["kernel"]; ok {
		return k
	}
	var sum uint64
	for _, k := range []string{"slab", "kernel_stack", "pagetables", "sec_pagetables", "percpu", "sock", "vmalloc"} {
		sum += st[k]
	}
	return sum
}

// Pids lists the group's processes.
func (g *v2Group) Pids() ([]int, error) { return g.ops.ids(g.dir, "cgroup.procs") }

// Kill writes cgroup.kill (Linux 5.14+) when present, then SIGKILLs
// whatever is still listed until the group is empty.
func (g *v2Group) Kill() error {
	if err := g.ops.write(filepath.Join(g.dir, "cgroup.kill"), "1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return writeErr(filepath.Join(g.dir, "cgroup.kill"), "1", err)
	}
	return killAll(g.name, g.Pids)
}

// Remove kills what is left and removes the group's directory.
func (g *v2Group) Remove() error {
	if err := g.Kill(); err != nil {
		return err
	}
	return g.ops.removeDir(g.dir, removeWithin)
}
