package cgroup

import (
	"strings"
	"testing"
)

const hostMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 /outer /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 23 0:40 / /mnt/with\040space rw - cgroup2 cgroup2 rw
`

const hostSelf = `9:name=systemd:/
4:memory:/outer/process_api/abc
3:cpuset:/
2:cpu,cpuacct:/user.slice
0::/
`

func TestParseMountinfo(t *testing.T) {
	ms, err := parseMountinfo(strings.NewReader(hostMountinfo))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 6 {
		t.Fatalf("got %d cgroup mounts, want 6: %+v", len(ms), ms)
	}
	if ms[0].dir != "/sys/fs/cgroup/cpu,cpuacct" || !contains(ms[0].ctrls, "cpuacct") || !contains(ms[0].ctrls, "cpu") {
		t.Errorf("first mount = %+v", ms[0])
	}
	if ms[2].root != "/outer" {
		t.Errorf("memory root = %q, want /outer", ms[2].root)
	}
	if !ms[4].v2 || ms[5].dir != "/mnt/with space" {
		t.Errorf("v2 mounts = %+v %+v", ms[4], ms[5])
	}
}

func TestResolveSelfV1(t *testing.T) {
	ms, _ := parseMountinfo(strings.NewReader(hostMountinfo))
	self, err := parseProcCgroup(strings.NewReader(hostSelf))
	if err != nil {
		t.Fatal(err)
	}
	got, err := resolveSelf(V1, ms, self, v1Controllers)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpuset":  "/sys/fs/cgroup/cpuset",
		"memory":  "/sys/fs/cgroup/memory/process_api/abc", // mounted root /outer removed
		"cpuacct": "/sys/fs/cgroup/cpu,cpuacct/user.slice",
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("%s: got %q, want %q", c, got[c], w)
		}
	}
}

func TestResolveSelfErrors(t *testing.T) {
	ms, _ := parseMountinfo(strings.NewReader(hostMountinfo))
	self, _ := parseProcCgroup(strings.NewReader("4:memory:/elsewhere\n3:cpuset:/\n2:cpu,cpuacct:/\n"))
	if _, err := resolveSelf(V1, ms, self, v1Controllers); err == nil || !strings.Contains(err.Error(), "outside the tree") {
		t.Errorf("memory outside mounted root: err = %v", err)
	}
	self, _ = parseProcCgroup(strings.NewReader("3:cpuset:/\n"))
	if _, err := resolveSelf(V1, ms, self, v1Controllers); err == nil || !strings.Contains(err.Error(), "memory is not available") {
		t.Errorf("no memory entry: err = %v", err)
	}
	if _, err := resolveSelf(V2, ms[:1], map[string]string{"": "/"}, nil); err == nil || !strings.Contains(err.Error(), "no cgroup2") {
		t.Errorf("v2 without cgroup2 mount: err = %v", err)
	}
}
