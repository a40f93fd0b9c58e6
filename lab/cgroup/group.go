package cgroup

// Limits are the resources given to a new group.
type Limits struct {
	// CPUs is a cpuset list ("1", "0-1"); "" = all CPUs of the parent.
	CPUs string
	// Mems is the cpuset memory-node list; "" = the parent's nodes.
	Mems string
	// MemoryBytes is the memory limit; 0 = none.
	MemoryBytes int64
}

// Group is one control group, in every hierarchy the lab uses.
type Group interface {
	// Name is the name given to Create.
	Name() string
	// ProcsFiles lists the cgroup.procs files a process writes its pid
	// into to join the group: one per v1 hierarchy, one for v2, none for a
	// process-tree group.
	ProcsFiles() []string
	// Stats reads the group's counters.
	Stats() (Stats, error)
	// Pids lists the processes in the group.
	Pids() ([]int, error)
	// Kill sends SIGKILL to every process in the group and re-checks until
	// it is empty, for a bounded time.
	Kill() error
	// Remove kills what is left and removes the group from every
	// hierarchy. Removing a removed group is not an error.
	Remove() error
}

// Stats are a group's counters at one moment.
type Stats struct {
	CPUNanos   uint64 // CPU time used by the group's tasks, cumulative
	MemCurrent uint64 // memory charged now (v1 usage_in_bytes, v2 memory.current)
	MemAnon    uint64 // anonymous memory (v1 rss, v2 anon)
	MemKernel  uint64 // kernel memory charged to the group: slab, stacks, page tables, socket buffers (v1 memory.kmem.usage_in_bytes, v2 memory.stat kernel; 0 where the kernel does not count it)
	MemFile    uint64 // page cache (v1 cache, v2 file): charged to whichever group first read a file's pages, so it depends on what ran before
	MemPeak    uint64 // highest MemCurrent so far (v1 max_usage_in_bytes, v2 memory.peak; 0 if the kernel lacks it)
	Procs      int    // processes
	Threads    int    // threads
}

// MemNeed is what the group's processes need: anonymous plus kernel
// memory, page cache left out (the headline idle and under-load figure).
func (s Stats) MemNeed() uint64 { return s.MemAnon + s.MemKernel }
