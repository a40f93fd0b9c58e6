package cgroup

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const userHZ = 100

// ProcessTree returns a Group made of process pid, its descendants and the
// members of its process group, read from /proc, for running without
// cgroups. It has no cgroup.procs files and Remove only kills. Its numbers
// are rougher than a cgroup's: memory is the sum of each process's resident
// set (shared pages count once per process), MemPeak is the highest sum
// seen by Stats, and CPU time covers live processes plus the children pid
// has reaped, so it can step back when an unreaped child exits.
func ProcessTree(name string, pid int) Group {
	return &treeGroup{name: name, pid: pid}
}

type treeGroup struct {
	name string
	pid  int
	mu   sync.Mutex
	peak uint64
}

// Name returns the group's name.
func (g *treeGroup) Name() string { return g.name }

// ProcsFiles is empty: processes join a tree by being forked into it.
func (g *treeGroup) ProcsFiles() []string { return nil }

// procStat is the part of /proc/PID/stat the tree needs.
type procStat struct {
	ppid, pgid int
	cpuTicks   uint64 // utime + stime
	childTicks uint64 // cutime + cstime
}

func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime ..."; comm may hold ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	if f[0] == "Z" {
		return procStat{}, os.ErrNotExist // zombies hold no resources
	}
	n := func(k int) uint64 { v, _ := strconv.ParseUint(f[k], 10, 64); return v }
	return procStat{
		ppid:       int(n(1)),
		pgid:       int(n(2)),
		cpuTicks:   n(11) + n(12),
		childTicks: n(13) + n(14),
	}, nil
}

// Pids lists pid, its descendants and its process group's members.
func (g *treeGroup) Pids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(p)
		if err != nil {
			continue
		}
		children[st.ppid] = append(children[st.ppid], p)
		if st.pgid == g.pid || p == g.pid {
			out = append(out, p)
		}
	}
	for i := 0; i < len(out); i++ { // breadth-first over descendants
		out = append(out, children[out[i]]...)
	}
	return union(out), nil
}

// Stats sums /proc/PID/stat and /proc/PID/status over the tree.
func (g *treeGroup) Stats() (Stats, error) {
	pids, err := g.Pids()
	if err != nil {
		return Stats{}, err
	}
	var s Stats
	var ticks uint64
	for _, p := range pids {
		st, err := readProcStat(p)
		if err != nil {
			continue // exited meanwhile
		}
		ticks += st.cpuTicks
		if p == g.pid {
			ticks += st.childTicks
		}
		kv, err := readStatus(p)
		if err != nil {
			continue
		}
		s.Procs++
		s.Threads += int(kv["Threads"])
		s.MemCurrent += kv["VmRSS"]
		s.MemAnon += kv["RssAnon"]
		s.MemFile += kv["RssFile"] + kv["RssShmem"]
	}
	s.CPUNanos = ticks * (1e9 / userHZ)
	g.mu.Lock()
	g.peak = max(g.peak, s.MemCurrent)
	s.MemPeak = g.peak
	g.mu.Unlock()
	return s, nil
}

// readStatus reads the numeric fields of /proc/PID/status; "kB" values are
// returned in bytes.
func readStatus(pid int) (map[string]uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out, nil
}

// Kill sends SIGKILL to the whole tree until none of it is left.
func (g *treeGroup) Kill() error { return killAll(g.name, g.Pids) }

// Remove kills the tree; there is nothing else to remove.
func (g *treeGroup) Remove() error { return g.Kill() }
