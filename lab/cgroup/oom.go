package cgroup

// OOMKills returns how many processes of g the kernel's OOM killer has
// killed since the group was made: the oom_kill count of v2 memory.events,
// or the oom_kill line of v1 memory.oom_control. ok is false when g has no
// memory controller to ask (a process tree, a v1 host without the memory
// hierarchy, a kernel without the counter).
func OOMKills(g Group) (n uint64, ok bool, err error) {
	var ops fsOps
	var dir, file string
	switch g := g.(type) {
	case *v1Group:
		d, has := g.by["memory"]
		if !has {
			return 0, false, nil
		}
		ops, dir, file = g.ops, d, "memory.oom_control"
	case *v2Group:
		ops, dir, file = g.ops, g.dir, "memory.events"
	default:
		return 0, false, nil
	}
	kv, err := ops.keyed(dir, file)
	if err != nil {
		return 0, false, err
	}
	n, ok = kv["oom_kill"]
	return n, ok, nil
}
