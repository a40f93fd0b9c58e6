package cgroup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/loadlab/loadlab/pin"
)

// Options configure a Manager beyond NewManager's root.
type Options struct {
	// Root is "" for the host (mounts from /proc/self/mountinfo, our cgroup
	// from /proc/self/cgroup), else the top of a fake tree for tests: v1
	// has one directory per controller (Root/cpuset, Root/memory,
	// Root/cpuacct), v2 has cgroup.controllers at Root.
	Root string
	// Version of the fake tree; 0 guesses from the files at Root.
	Version Version
	// SelfCgroup is /proc/self/cgroup-style text naming our own cgroup in
	// the fake tree; "" puts us at the top of every hierarchy.
	SelfCgroup string
	// Pid names the run directory loadlab-<Pid>; 0 means os.Getpid(). On
	// v2 this is also the process that may be moved into a leaf.
	Pid int
	// Prefix replaces "loadlab" in the run directory's name (and in the
	// names RemoveStale looks for): lowercase letters. Tests that plant a
	// dead run's directories use their own, out of reach of the sweeps of
	// lab runs beside them.
	Prefix string
}

// DefaultPrefix names run directories loadlab-<pid>.
const DefaultPrefix = "loadlab"

// Manager creates lab groups under the cgroup this process sits in, inside a
// run directory loadlab-<pid> (one per hierarchy), and removes them all on
// Cleanup.
type Manager struct {
	version Version
	ops     fsOps
	pid     int
	prefix  string
	hiers   []*hier // v1: one per mounted hierarchy in use; v2: exactly one

	// v2 only: when our own cgroup held only us, we moved into this leaf so
	// that controllers could be enabled for the subtree (no internal
	// processes rule), and enabled lists what we switched on in the parent.
	relocated string
	enabled   []string
	v2cpu     bool // v2: the cpu controller is enabled for our groups

	mu     sync.Mutex
	groups []Group
	names  map[string]bool
	closed bool
}

// hier is one cgroup hierarchy: our own cgroup in it and the run directory.
type hier struct {
	ctrls  []string // v1 controllers of this hierarchy that the lab uses
	parent string   // our own cgroup's directory
	base   string   // parent/loadlab-<pid>
}

func (h *hier) has(c string) bool { return contains(h.ctrls, c) }

// NewManager prepares lab groups under this process's own cgroup. root is ""
// for the host, or the top of a fake tree (see Options.Root). It creates the
// run directory loadlab-<pid> right away, so a permission problem shows here;
// call Cleanup when done.
func NewManager(root string) (*Manager, error) {
	return NewManagerWith(Options{Root: root})
}

// NewManagerWith is NewManager with all options.
func NewManagerWith(o Options) (*Manager, error) {
	return newManager(o, hostOps)
}

func newManager(o Options, ops fsOps) (*Manager, error) {
	m, err := resolve(o, ops)
	if err != nil {
		return nil, err
	}
	setup := m.setupV1
	if m.version == V2 {
		setup = m.setupV2
	}
	if err := setup(); err != nil {
		return nil, err
	}
	return m, nil
}

// resolve finds our own cgroup in every hierarchy the lab uses and names the
// run directories, without creating anything.
func resolve(o Options, ops fsOps) (*Manager, error) {
	m := &Manager{ops: ops, pid: o.Pid, prefix: o.Prefix, names: map[string]bool{}}
	if m.pid == 0 {
		m.pid = os.Getpid()
	}
	if m.prefix == "" {
		m.prefix = DefaultPrefix
	}
	if !prefixRe.MatchString(m.prefix) {
		return nil, fmt.Errorf("cgroup run prefix %q: use lowercase letters", m.prefix)
	}
	var (
		mounts []cgMount
		self   map[string]string
		err    error
	)
	if o.Root == "" {
		if m.version, err = Detect(); err != nil {
			return nil, err
		}
		if mounts, err = readMounts("/proc/self/mountinfo"); err != nil {
			return nil, err
		}
		if self, err = readSelf("/proc/self/cgroup"); err != nil {
			return nil, err
		}
	} else {
		if m.version = o.Version; m.version == 0 {
			if m.version, err = detectTree(o.Root); err != nil {
				return nil, err
			}
		}
		mounts, self = fakeMounts(o.Root, m.version)
		if o.SelfCgroup != "" {
			if self, err = parseProcCgroup(strings.NewReader(o.SelfCgroup)); err != nil {
				return nil, fmt.Errorf("Options.SelfCgroup: %v", err)
			}
		}
	}
	dirs, err := resolveSelf(m.version, mounts, self, v1Controllers)
	if err != nil {
		return nil, err
	}
	run := m.runDirName()
	if m.version == V2 {
		// A process in a run's leaf loadlab-<pid>-self (the run itself
		// after relocating, or the reaper it started) belongs to the
		// cgroup above it.
		if sm := staleName(m.prefix).FindStringSubmatch(filepath.Base(dirs[""])); sm != nil && sm[2] != "" {
			dirs[""] = filepath.Dir(dirs[""])
		}
		m.hiers = []*hier{{parent: dirs[""], base: filepath.Join(dirs[""], run)}}
		return m, nil
	}
	order := append([]string(nil), v1Controllers...)
	for _, c := range v1Optional {
		// An optional hierarchy that is not mounted (or not ours) is left
		// out; Create refuses a limit that needs it.
		if od, err := resolveSelf(m.version, mounts, self, []string{c}); err == nil {
			dirs[c] = od[c]
			order = append(order, c)
		}
	}
	for _, c := range order {
		d := dirs[c]
		if h := m.hierAt(d); h != nil {
			h.ctrls = append(h.ctrls, c) // co-mounted, e.g. cpu,cpuacct
			continue
		}
		m.hiers = append(m.hiers, &hier{ctrls: []string{c}, parent: d, base: filepath.Join(d, run)})
	}
	return m, nil
}

func (m *Manager) hierAt(dir string) *hier {
	for _, h := range m.hiers {
		if h.parent == dir {
			return h
		}
	}
	return nil
}

// fakeMounts describes a fake tree at root as the host's mount table would,
// with us at the top of every hierarchy.
func fakeMounts(root string, v Version) ([]cgMount, map[string]string) {
	self := map[string]string{"": "/"}
	if v == V2 {
		return []cgMount{{dir: root, root: "/", v2: true}}, self
	}
	var ms []cgMount
	for _, c := range v1Controllers {
		ms = append(ms, cgMount{dir: filepath.Join(root, c), root: "/", ctrls: []string{c}})
		self[c] = "/"
	}
	for _, c := range v1Optional {
		if fi, err := os.Stat(filepath.Join(root, c)); err == nil && fi.IsDir() {
			ms = append(ms, cgMount{dir: filepath.Join(root, c), root: "/", ctrls: []string{c}})
			self[c] = "/"
		}
	}
	return ms, self
}

func readMounts(path string) ([]cgMount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseMountinfo(f)
}

func readSelf(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s, err := parseProcCgroup(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}

// runDirName is the per-process directory every group of m's run lives
// in: <prefix>-<pid>.
func (m *Manager) runDirName() string { return fmt.Sprintf("%s-%d", m.prefix, m.pid) }

var prefixRe = regexp.MustCompile(`^[a-z]+$`)

// makeBase creates a run directory; one left by an earlier process with our
// pid (crash, pid reused) is taken over.
func (m *Manager) makeBase(h *hier) error {
	if err := m.ops.mkdir(h.base); err != nil && !errors.Is(err, fs.ErrExist) {
		return mkdirErr(h.parent, err)
	}
	return nil
}

// setupV1 creates the run directory in each hierarchy; in cpuset it copies
// the parent's CPUs and memory nodes, which a v1 cpuset needs before any
// child can hold a task.
func (m *Manager) setupV1() error {
	for i, h := range m.hiers {
		if err := m.makeBase(h); err != nil {
			m.removeBases(m.hiers[:i])
			return err
		}
		if h.has("cpuset") {
			if err := m.copyCpuset(h.parent, h.base); err != nil {
				m.removeBases(m.hiers[:i+1])
				return err
			}
		}
	}
	return nil
}

// copyCpuset copies cpuset.cpus and cpuset.mems from one v1 group to another.
func (m *Manager) copyCpuset(from, to string) error {
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		v, err := m.ops.get(from, f)
		if err != nil {
			return fmt.Errorf("cannot read %s: %v", filepath.Join(from, f), bare(err))
		}
		if err := m.ops.set(to, f, v); err != nil {
			return err
		}
	}
	return nil
}

// removeBases removes run directories (best effort, used on setup failure).
func (m *Manager) removeBases(hs []*hier) {
	for _, h := range hs {
		_ = m.ops.removeDir(h.base, 0)
	}
}

var groupName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Create makes a group named name with limits l in every hierarchy. The name
// is a plain directory name (letters, digits, '.', '_', '-').
func (m *Manager) Create(name string, l Limits) (Group, error) {
	if !groupName.MatchString(name) {
		return nil, fmt.Errorf("bad cgroup name %q: use letters, digits, '.', '_' or '-' (at most 64)", name)
	}
	if l.CPUs != "" {
		if _, err := pin.ParseList(l.CPUs); err != nil {
			return nil, err
		}
	}
	if l.Mems != "" {
		if _, err := pin.ParseList(l.Mems); err != nil {
			return nil, fmt.Errorf("bad memory node list %q: want numbers and ranges like 0-1", l.Mems)
		}
	}
	if l.MemoryBytes < 0 {
		return nil, fmt.Errorf("bad memory limit %d: want bytes > 0, or 0 for none", l.MemoryBytes)
	}
	if l.CPUQuota < 0 || l.CPUQuota > MaxCPUQuota || l.CPUQuota != l.CPUQuota {
		return nil, fmt.Errorf("bad CPU quota %g: want cores > 0 (1.0 = one CPU), at most %d, or 0 for none", l.CPUQuota, MaxCPUQuota)
	}
	if l.CPUQuota > 0 && !m.CanQuota() {
		return nil, fmt.Errorf("a CPU quota needs the cgroup cpu controller, which this process cannot use (%s): mount or delegate it, or drop the quota", m.version)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("cgroup manager already cleaned up; make a new one")
	}
	if m.names[name] {
		return nil, fmt.Errorf("cgroup %s already exists in this run; pick another name", name)
	}
	var (
		g   Group
		err error
	)
	if m.version == V2 {
		g, err = m.createV2(name, l)
	} else {
		g, err = m.createV1(name, l)
	}
	if err != nil {
		return nil, err
	}
	m.names[name] = true
	m.groups = append(m.groups, g)
	return g, nil
}

// CanQuota reports whether groups can have a CPU quota: the v1 cpu
// hierarchy is mounted and ours, or v2's cpu controller is enabled for the
// run directory.
func (m *Manager) CanQuota() bool {
	if m.version == V2 {
		return m.v2cpu
	}
	for _, h := range m.hiers {
		if h.has("cpu") {
			return true
		}
	}
	return false
}

// Version is the cgroup version the manager works with.
func (m *Manager) Version() Version { return m.version }

// RunDirs lists the run directories (one per hierarchy) that hold this
// manager's groups.
func (m *Manager) RunDirs() []string {
	var out []string
	for _, h := range m.hiers {
		out = append(out, h.base)
	}
	return out
}

// Cleanup kills and removes every group this manager made, then its run
// directories. It is safe to call more than once.
func (m *Manager) Cleanup() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for i := len(m.groups) - 1; i >= 0; i-- {
		if err := m.groups[i].Remove(); err != nil {
			errs = append(errs, err)
		}
	}
	m.groups = nil
	for _, h := range m.hiers {
		if err := m.ops.removeDir(h.base, removeWithin); err != nil {
			errs = append(errs, err)
		}
	}
	if m.relocated != "" {
		if err := m.undoRelocation(); err != nil {
			errs = append(errs, err)
		}
	}
	m.closed = true
	return errors.Join(errs...)
}
