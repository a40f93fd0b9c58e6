package pin

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SysCPUDir is where Linux exposes the CPU topology.
const SysCPUDir = "/sys/devices/system/cpu"

// CPU describes one online logical CPU.
type CPU struct {
	ID       int    `json:"id"`
	Core     int    `json:"core"`     // core_id, unique within its package
	Package  int    `json:"package"`  // physical_package_id
	Siblings CPUSet `json:"siblings"` // hyperthreads on the same core, this CPU included
}

// Topology lists the online CPUs, sorted by id.
type Topology struct {
	CPUs []CPU `json:"cpus"`
	// Warnings name topology files that were missing, with the fallback used.
	Warnings []string `json:"warnings,omitempty"`
}

// ReadTopology reads the online CPUs from /sys/devices/system/cpu.
func ReadTopology() (*Topology, error) { return ReadTopologyFrom(SysCPUDir) }

// ReadTopologyFrom reads a tree laid out like /sys/devices/system/cpu: the
// file "online" and, per CPU, cpuN/topology/{core_id,physical_package_id,
// thread_siblings_list}. A CPU without topology files counts as its own
// core in package 0, and a warning says so.
func ReadTopologyFrom(root string) (*Topology, error) {
	online, err := readList(filepath.Join(root, "online"))
	if err != nil {
		return nil, fmt.Errorf("read online CPUs: %w", err)
	}
	t := &Topology{}
	for _, id := range online {
		c, warn, err := readCPU(root, id, online)
		if err != nil {
			return nil, err
		}
		if warn != "" {
			t.Warnings = append(t.Warnings, warn)
		}
		t.CPUs = append(t.CPUs, c)
	}
	return t, nil
}

// readCPU reads one CPU's topology files.
func readCPU(root string, id int, online CPUSet) (CPU, string, error) {
	dir := filepath.Join(root, "cpu"+strconv.Itoa(id), "topology")
	c := CPU{ID: id, Core: id, Package: 0, Siblings: CPUSet{id}}
	core, err := readInt(filepath.Join(dir, "core_id"))
	if errors.Is(err, os.ErrNotExist) {
		return c, fmt.Sprintf("cpu%d has no topology in %s: treated as its own core in package 0", id, dir), nil
	}
	if err != nil {
		return c, "", err
	}
	pkg, err := readInt(filepath.Join(dir, "physical_package_id"))
	if err != nil {
		return c, "", err
	}
	sib, err := readList(filepath.Join(dir, "thread_siblings_list"))
	if err != nil {
		return c, "", err
	}
	sib = sib.Intersect(online).Union(CPUSet{id})
	c.Core, c.Package, c.Siblings = core, pkg, sib
	return c, "", nil
}

// readInt reads a file holding one decimal integer (-1 becomes 0, as the
// kernel writes -1 for an unknown package on some platforms).
func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", path, strings.TrimSpace(string(b)))
	}
	return max(n, 0), nil
}

// readList reads a file holding a CPU list.
func readList(path string) (CPUSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseList(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Online returns the ids of all CPUs in t.
func (t *Topology) Online() CPUSet {
	out := make(CPUSet, 0, len(t.CPUs))
	for _, c := range t.CPUs {
		out = append(out, c.ID)
	}
	return NewCPUSet(out...)
}

// CPU returns the CPU with the given id.
func (t *Topology) CPU(id int) (CPU, bool) {
	for _, c := range t.CPUs {
		if c.ID == id {
			return c, true
		}
	}
	return CPU{}, false
}

// Cores groups the CPUs of within into physical cores (hyperthread sibling
// groups), ordered by their lowest CPU id. CPUs of within that t does not
// know are ignored.
func (t *Topology) Cores(within CPUSet) []CPUSet {
	seen := map[string]bool{}
	var cores []CPUSet
	for _, c := range t.CPUs {
		if !within.Contains(c.ID) {
			continue
		}
		core := c.Siblings.Intersect(within)
		key := core.String()
		if !seen[key] {
			seen[key] = true
			cores = append(cores, core)
		}
	}
	slices.SortFunc(cores, func(a, b CPUSet) int { return cmp.Compare(a[0], b[0]) })
	return cores
}

// SMT reports whether any core in t has more than one hyperthread.
func (t *Topology) SMT() bool {
	for _, c := range t.CPUs {
		if len(c.Siblings) > 1 {
			return true
		}
	}
	return false
}
