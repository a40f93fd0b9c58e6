package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
)

// v1Group is a group in the v1 hierarchies cpuset, memory and cpuacct,
// and cpu where it is mounted.
type v1Group struct {
	name string
	ops  fsOps
	dirs []string          // one per hierarchy, in join order
	by   map[string]string // controller -> directory
}

// createV1 makes the group's directory in every hierarchy and sets its
// limits: cpuset.cpus and cpuset.mems first (a v1 cpuset with either empty
// refuses tasks), then memory.limit_in_bytes.
func (m *Manager) createV1(name string, l Limits) (Group, error) {
	g := &v1Group{name: name, ops: m.ops, by: map[string]string{}}
	fail := func(err error) (Group, error) {
		for i := len(g.dirs) - 1; i >= 0; i-- {
			_ = m.ops.removeDir(g.dirs[i], 0)
		}
		return nil, err
	}
	for _, h := range m.hiers {
		dir := filepath.Join(h.base, name)
		if err := m.ops.mkdir(dir); err != nil {
			return fail(mkdirErr(h.base, err))
		}
		g.dirs = append(g.dirs, dir)
		for _, c := range h.ctrls {
			g.by[c] = dir
		}
		if h.has("cpuset") {
			cpus, mems := l.CPUs, l.Mems
			var err error
			if cpus == "" {
				if cpus, err = m.ops.get(h.base, "cpuset.cpus"); err != nil {
					return fail(err)
				}
			}
			if mems == "" {
				if mems, err = m.ops.get(h.base, "cpuset.mems"); err != nil {
					return fail(err)
				}
			}
			if err := m.ops.set(dir, "cpuset.cpus", cpus); err != nil {
				allowed, _ := m.ops.get(h.base, "cpuset.cpus")
				return fail(fmt.Errorf("%v (this cgroup allows CPUs %s)", err, allowed))
			}
			if err := m.ops.set(dir, "cpuset.mems", mems); err != nil {
				return fail(err)
			}
		}
		if h.has("cpu") && l.CPUQuota > 0 {
			// The period first: the quota is checked against it.
			if err := m.ops.set(dir, "cpu.cfs_period_us", strconv.Itoa(QuotaPeriodMicros)); err != nil {
				return fail(err)
			}
			if err := m.ops.set(dir, "cpu.cfs_quota_us", strconv.FormatInt(quotaMicros(l.CPUQuota), 10)); err != nil {
				return fail(err)
			}
		}
		if h.has("memory") && l.MemoryBytes > 0 {
			if err := m.ops.set(dir, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
				return fail(err)
			}
		}
	}
	return g, nil
}

// Name returns the name given to Create.
func (g *v1Group) Name() string { return g.name }

// ProcsFiles returns cgroup.procs of each hierarchy.
func (g *v1Group) ProcsFiles() []string {
	out := make([]string, len(g.dirs))
	for i, d := range g.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// Stats reads cpuacct.usage, memory.usage_in_bytes, max_usage_in_bytes,
// memory.stat (total_rss, total_cache), memory.kmem.usage_in_bytes (0
// when absent) and counts cgroup.procs and tasks of the memory hierarchy.
func (g *v1Group) Stats() (Stats, error) {
	var s Stats
	var err error
	cpu, mem := g.by["cpuacct"], g.by["memory"]
	if s.CPUNanos, err = g.ops.number(cpu, "cpuacct.usage"); err != nil {
		return s, err
	}
	if s.MemCurrent, err = g.ops.number(mem, "memory.usage_in_bytes"); err != nil {
		return s, err
	}
	if s.MemPeak, err = g.ops.number(mem, "memory.max_usage_in_bytes"); err != nil {
		return s, err
	}
	st, err := g.ops.keyed(mem, "memory.stat")
	if err != nil {
		return s, err
	}
	s.MemAnon, s.MemFile = pick(st, "total_rss", "rss"), pick(st, "total_cache", "cache")
	// Kernel memory (slab, stacks, socket buffers) is charged here and
	// counted in usage_in_bytes when kmem accounting is on.
	if s.MemKernel, err = g.ops.number(mem, "memory.kmem.usage_in_bytes"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, err
	}
	if d, ok := g.by["cpu"]; ok {
		if err := v1Bandwidth(g.ops, d, &s); err != nil {
			return s, err
		}
	}
	procs, err := g.ops.ids(mem, "cgroup.procs")
	if err != nil {
		return s, err
	}
	tasks, err := g.ops.ids(mem, "tasks")
	if err != nil {
		return s, err
	}
	s.Procs, s.Threads = len(procs), len(tasks)
	return s, nil
}

// pick returns m[a] if present, else m[b].
func pick(m map[string]uint64, a, b string) uint64 {
	if v, ok := m[a]; ok {
		return v
	}
	return m[b]
}

// Pids lists the processes in any of the group's hierarchies.
func (g *v1Group) Pids() ([]int, error) {
	var lists [][]int
	for _, d := range g.dirs {
		l, err := g.ops.ids(d, "cgroup.procs")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	return union(lists...), nil
}

// Kill sends SIGKILL to every process until the group is empty (v1 has no
// cgroup.kill).
func (g *v1Group) Kill() error { return killAll(g.name, g.Pids) }

// Remove kills what is left and removes the group's directories.
func (g *v1Group) Remove() error {
	if err := g.Kill(); err != nil {
		return err
	}
	var errs []error
	for i := len(g.dirs) - 1; i >= 0; i-- {
		if err := g.ops.removeDir(g.dirs[i], removeWithin); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// v1Bandwidth reads the quota (cpu.cfs_quota_us over cpu.cfs_period_us; -1
// = none) and cpu.stat's nr_periods, nr_throttled and throttled_time (ns).
func v1Bandwidth(ops fsOps, dir string, s *Stats) error {
	q, err := ops.get(dir, "cpu.cfs_quota_us")
	if err != nil {
		return err
	}
	p, err := ops.get(dir, "cpu.cfs_period_us")
	if err != nil {
		return err
	}
	qi, _ := strconv.ParseInt(q, 10, 64)
	pi, _ := strconv.ParseInt(p, 10, 64)
	s.CPUQuota = coresOf(qi, pi)
	st, err := ops.keyed(dir, "cpu.stat")
	if err != nil {
		return err
	}
	s.NrPeriods, s.NrThrottled, s.ThrottledNanos = st["nr_periods"], st["nr_throttled"], st["throttled_time"]
	return nil
}
