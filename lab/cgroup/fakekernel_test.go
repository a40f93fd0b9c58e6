package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/loadlab/loadlab/pin"
)

// fakeKernel emulates cgroupfs on a temp dir: mkdir fills in the control
// files the kernel would show, and writes follow the kernel's rules that the
// manager depends on (v1 cpuset needs cpus+mems before tasks; v2 controllers
// must be available, and a non-root group cannot both hold processes and
// enable controllers for children; rmdir refuses busy groups).
type fakeKernel struct {
	t    *testing.T
	root string
	v    Version
}

func newFakeTree(t *testing.T, v Version) *fakeKernel {
	t.Helper()
	k := &fakeKernel{t: t, root: t.TempDir(), v: v}
	files := map[string]string{}
	if v == V2 {
		files = map[string]string{
			"cgroup.controllers":     "cpuset cpu io memory hugetlb pids rdma misc",
			"cgroup.subtree_control": "",
			"cgroup.procs":           "",
			"cgroup.threads":         "",
			"cpuset.cpus.effective":  "0-1",
			"cpuset.mems.effective":  "0",
			"cpu.stat":               "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
		}
	} else {
		for _, c := range append(append([]string(nil), v1Controllers...), v1Optional...) {
			if err := os.Mkdir(filepath.Join(k.root, c), 0o755); err != nil {
				t.Fatal(err)
			}
			for n, val := range k.v1Files(c) {
				files[filepath.Join(c, n)] = val
			}
		}
		files["cpuset/cpuset.cpus"] = "0-1"
		files["cpuset/cpuset.mems"] = "0"
	}
	for n, val := range files {
		if err := os.WriteFile(filepath.Join(k.root, n), []byte(val), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func (k *fakeKernel) ops() fsOps {
	return fsOps{mkdir: k.mkdir, rmdir: k.rmdir, write: k.write, read: k.read}
}

// hierOf returns the v1 controller whose tree holds path ("" for v2).
func (k *fakeKernel) hierOf(path string) string {
	if k.v == V2 {
		return ""
	}
	rel, _ := filepath.Rel(k.root, path)
	return strings.Split(rel, string(filepath.Separator))[0]
}

func (k *fakeKernel) topOf(path string) string { return filepath.Join(k.root, k.hierOf(path)) }

func (k *fakeKernel) v1Files(c string) map[string]string {
	f := map[string]string{"cgroup.procs": "", "tasks": "", "notify_on_release": "0"}
	switch c {
	case "cpuset":
		f["cpuset.cpus"], f["cpuset.mems"] = "", ""
	case "memory":
		f["memory.limit_in_bytes"] = "9223372036854771712"
		f["memory.usage_in_bytes"] = "0"
		f["memory.max_usage_in_bytes"] = "0"
		f["memory.stat"] = "cache 0\nrss 0\ntotal_cache 0\ntotal_rss 0\n"
	case "cpuacct":
		f["cpuacct.usage"] = "0"
	case "cpu":
		f["cpu.cfs_period_us"], f["cpu.cfs_quota_us"] = "100000", "-1"
		f["cpu.stat"] = "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"
	}
	return f
}

func v2CtrlFiles(c string) map[string]string {
	switch c {
	case "cpuset":
		return map[string]string{"cpuset.cpus": "", "cpuset.mems": "", "cpuset.cpus.effective": "0-1"}
	case "memory":
		return map[string]string{"memory.current": "0", "memory.peak": "0", "memory.max": "max", "memory.stat": "anon 0\nfile 0\n"}
	case "cpu":
		return map[string]string{"cpu.max": "max 100000", "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n"}
	}
	return nil
}

func (k *fakeKernel) mkdir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	var files map[string]string
	if k.v == V2 {
		ctrls := k.get(filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"))
		files = map[string]string{
			"cgroup.procs": "", "cgroup.threads": "", "cgroup.controllers": ctrls,
			"cgroup.subtree_control": "", "cgroup.kill": "", "cgroup.events": "populated 0\n",
			"cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
		}
		for _, c := range strings.Fields(ctrls) {
			for n, v := range v2CtrlFiles(c) {
				files[n] = v
			}
		}
	} else {
		files = k.v1Files(k.hierOf(dir))
	}
	for n, v := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (k *fakeKernel) get(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		k.t.Fatalf("fake kernel: %v", err)
	}
	return strings.TrimSpace(string(b))
}

func (k *fakeKernel) put(file, val string) {
	if err := os.WriteFile(file, []byte(val), 0o644); err != nil {
		k.t.Fatalf("fake kernel: %v", err)
	}
}

func subdirs(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}

func perr(op, path string, err error) error { return &fs.PathError{Op: op, Path: path, Err: err} }

// livePids filters a pid list to processes that exist and are not zombies,
// as the kernel drops exited tasks from cgroup.procs.
func livePids(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		pid, _ := strconv.Atoi(f)
		b, err := os.ReadFile("/proc/" + f + "/stat")
		if err != nil || pid <= 0 {
			continue
		}
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i+1:]), " Z") {
			continue
		}
		out = append(out, f)
	}
	return out
}

func (k *fakeKernel) read(file string) ([]byte, error) {
	switch filepath.Base(file) {
	case "cgroup.procs", "tasks", "cgroup.threads":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		live := strings.Join(livePids(string(b)), "\n")
		k.put(file, live)
		return []byte(live), nil
	}
	return os.ReadFile(file)
}

func (k *fakeKernel) rmdir(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return perr("rmdir", dir, syscall.ENOENT)
	}
	b, _ := k.read(filepath.Join(dir, "cgroup.procs"))
	if len(subdirs(dir)) > 0 || len(strings.Fields(string(b))) > 0 {
		return perr("rmdir", dir, syscall.EBUSY)
	}
	return os.RemoveAll(dir)
}

func (k *fakeKernel) write(file, data string) error {
	if _, err := os.Stat(file); err != nil {
		return perr("open", file, syscall.ENOENT)
	}
	dir, val := filepath.Dir(file), strings.TrimSpace(data)
	switch filepath.Base(file) {
	case "cgroup.procs":
		return k.join(dir, val)
	case "cgroup.subtree_control":
		return k.subtree(dir, val)
	case "cgroup.kill":
		b, _ := k.read(filepath.Join(dir, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(f)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		return nil
	case "cpuset.cpus":
		parent := filepath.Join(filepath.Dir(dir), "cpuset.cpus")
		if k.v == V2 {
			parent = filepath.Join(k.root, "cpuset.cpus.effective")
		}
		want, err := pin.ParseList(val)
		if err != nil {
			return perr("write", file, syscall.EINVAL)
		}
		have, _ := pin.ParseList(k.get(parent))
		for _, c := range want {
			if !slices.Contains(have, c) {
				return perr("write", file, syscall.EINVAL)
			}
		}
	}
	k.put(file, val)
	return nil
}

func (k *fakeKernel) join(dir, val string) error {
	pid, err := strconv.Atoi(val)
	if err != nil || pid <= 0 {
		return perr("write", dir, syscall.EINVAL)
	}
	if k.v == V1 && k.hierOf(dir) == "cpuset" && (k.get(filepath.Join(dir, "cpuset.cpus")) == "" || k.get(filepath.Join(dir, "cpuset.mems")) == "") {
		return perr("write", dir, syscall.ENOSPC)
	}
	if k.v == V2 && dir != k.root && k.get(filepath.Join(dir, "cgroup.subtree_control")) != "" {
		return perr("write", dir, syscall.EBUSY)
	}
	tasks := "tasks"
	if k.v == V2 {
		tasks = "cgroup.threads"
	}
	_ = filepath.WalkDir(k.topOf(dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		for _, n := range []string{"cgroup.procs", tasks} {
			b, _ := os.ReadFile(filepath.Join(p, n))
			list := slices.DeleteFunc(strings.Fields(string(b)), func(s string) bool { return s == val })
			if p == dir {
				list = append(list, val)
			}
			k.put(filepath.Join(p, n), strings.Join(list, "\n"))
		}
		return nil
	})
	return nil
}

func (k *fakeKernel) subtree(dir, val string) error {
	avail := strings.Fields(k.get(filepath.Join(dir, "cgroup.controllers")))
	on := strings.Fields(k.get(filepath.Join(dir, "cgroup.subtree_control")))
	for _, tok := range strings.Fields(val) {
		c := tok[1:]
		switch tok[0] {
		case '+':
			if !slices.Contains(avail, c) {
				return perr("write", dir, syscall.ENOENT)
			}
			b, _ := k.read(filepath.Join(dir, "cgroup.procs"))
			if dir != k.root && len(strings.Fields(string(b))) > 0 {
				return perr("write", dir, syscall.EBUSY)
			}
			if !slices.Contains(on, c) {
				on = append(on, c)
			}
		case '-':
			for _, sd := range subdirs(dir) {
				if slices.Contains(strings.Fields(k.get(filepath.Join(sd, "cgroup.subtree_control"))), c) {
					return perr("write", dir, syscall.EBUSY)
				}
			}
			on = slices.DeleteFunc(on, func(s string) bool { return s == c })
		default:
			return perr("write", dir, syscall.EINVAL)
		}
	}
	k.put(filepath.Join(dir, "cgroup.subtree_control"), strings.Join(on, " "))
	for _, sd := range subdirs(dir) {
		k.put(filepath.Join(sd, "cgroup.controllers"), strings.Join(on, " "))
		for _, c := range []string{"cpuset", "memory", "cpu"} {
			for n, v := range v2CtrlFiles(c) {
				p := filepath.Join(sd, n)
				if slices.Contains(on, c) {
					if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
						k.put(p, v)
					}
				} else if n != "cpu.stat" { // every v2 group has cpu.stat
					os.Remove(p)
				}
			}
		}
	}
	return nil
}
