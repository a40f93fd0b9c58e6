package cgroup

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// v1Controllers are the v1 hierarchies the lab uses, in the order their
// cgroup.procs files are written.
var v1Controllers = []string{"cpuset", "memory", "cpuacct"}

// v1Optional are v1 hierarchies the lab joins when they are mounted: cpu
// (CFS quota and throttling counters), on its own on some hosts and
// co-mounted with cpuacct on others. Without it a group cannot have a CPU
// quota (Limits.CPUQuota).
var v1Optional = []string{"cpu"}

// v2Controllers must be enabled on the path down to a v2 lab group.
var v2Controllers = []string{"cpuset", "memory"}

// v2Optional are enabled too when the parent offers them: cpu (cpu.max,
// the throttling counters in cpu.stat).
var v2Optional = []string{"cpu"}

// cgMount is one mounted cgroup hierarchy from /proc/self/mountinfo.
type cgMount struct {
	dir   string   // mount point, e.g. /sys/fs/cgroup/memory
	root  string   // path inside the hierarchy that is mounted there (usually "/")
	v2    bool     // a cgroup2 mount
	ctrls []string // v1 controllers of the hierarchy (from the super options)
}

// parseMountinfo returns the cgroup and cgroup2 mounts listed in a
// /proc/PID/mountinfo text.
func parseMountinfo(r io.Reader) ([]cgMount, error) {
	var out []cgMount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		// 34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime shared:1 - cgroup cgroup rw,cpuset
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgMount{root: unescapeMount(f[3]), dir: unescapeMount(f[4])}
		switch g[0] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			// Super options: "rw,cpu,cpuacct", "rw,xattr,name=systemd".
			// Only controller names are looked up, so the rest is harmless.
			m.ctrls = strings.Split(g[2], ",")
		default:
			continue
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// unescapeMount undoes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseProcCgroup reads a /proc/PID/cgroup text into controller -> path. The
// v2 entry ("0::/path") is stored under the key "".
func parseProcCgroup(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cgroup entries found")
	}
	return out, nil
}

// selfDir joins the mount point of m with our cgroup path p, removing the
// part of p that is above the mounted root (cgroup namespaces, bind mounts).
func selfDir(m cgMount, p string) (string, error) {
	rel, err := filepath.Rel(m.root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("our cgroup %s is outside the tree mounted at %s (root %s)", p, m.dir, m.root)
	}
	return filepath.Join(m.dir, rel), nil
}

// resolveSelf finds the directory of our own cgroup for each controller
// (v1: one per name in ctrls; v2: one, under key "").
func resolveSelf(v Version, mounts []cgMount, self map[string]string, ctrls []string) (map[string]string, error) {
	out := map[string]string{}
	if v == V2 {
		p, ok := self[""]
		if !ok {
			return nil, fmt.Errorf("/proc/self/cgroup has no cgroup v2 entry (0::/...)")
		}
		for _, m := range mounts {
			if m.v2 {
				d, err := selfDir(m, p)
				if err != nil {
					continue
				}
				out[""] = d
				return out, nil
			}
		}
		return nil, fmt.Errorf("no cgroup2 file system mounted; use --no-cgroups")
	}
	for _, c := range ctrls {
		p, ok := self[c]
		if !ok {
			return nil, fmt.Errorf("cgroup v1 controller %s is not available to this process (/proc/self/cgroup); use --no-cgroups", c)
		}
		var lastErr error
		for _, m := range mounts {
			if m.v2 || !contains(m.ctrls, c) {
				continue
			}
			d, err := selfDir(m, p)
			if err != nil {
				lastErr = err
				continue
			}
			out[c] = d
			break
		}
		if _, ok := out[c]; !ok {
			if lastErr != nil {
				return nil, lastErr
			}
			return nil, fmt.Errorf("cgroup v1 hierarchy %s is not mounted; use --no-cgroups", c)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
