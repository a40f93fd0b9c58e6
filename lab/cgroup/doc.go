// Package cgroup creates the lab's control groups (cgroup v1 and v2), puts
// limits on them (cpuset, memory), reads their counters and removes them.
//
// Groups are made under the cgroup the calling process already sits in (read
// from /proc/self/cgroup per hierarchy), inside one directory per run named
// loadlab-<pid>, so parallel runs never collide and leftovers of a crashed run
// can be recognised by their dead pid (see RemoveStale).
//
// The module github.com/containerd/cgroups/v3 is used for host detection
// only (cgroups.Mode). Its cgroup1 and cgroup2 packages do not fit here: they
// pull in runtime-spec, cilium/ebpf, protobuf, logrus and dbus (not in
// go.mod), cgroup1 resolves hierarchies from the real mount table only (no
// fake tree for tests) and neither starts a process inside a v1 group (that
// is lab/proc's wrapper). What remains is a dozen control files, written by
// hand in this package.
//
// Imports: only pin, internal/fields and internal/pidstate among loadlab's
// packages; no other lab package, not gen, not cmd.
package cgroup
