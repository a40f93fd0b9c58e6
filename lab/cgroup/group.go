package cgroup

// Limits are the resources given to a new group.
type Limits struct {
	// CPUs is a cpuset list ("1", "0-1"); "" = all CPUs of the parent.
	CPUs string
	// Mems is the cpuset memory-node list; "" = the parent's nodes.
	Mems string
	// MemoryBytes is the memory limit; 0 = none.
	MemoryBytes int64
	// CPUQuota is a CFS bandwidth limit in cores over QuotaPeriod (1.0 =
	// one CPU's worth of time per period, spread over however many CPUs
	// the cpuset allows: docker --cpus); 0 = none. v1 writes
	// cpu.cfs_period_us and cpu.cfs_quota_us, v2 cpu.max.
	CPUQuota float64
}

// QuotaPeriodMicros is the CFS period of a CPU quota: the kernel's and Docker's
// default, 100 ms. A group that used its quota early in a period waits
// (is throttled) until the next one starts.
const QuotaPeriodMicros = 100_000

// MaxCPUQuota bounds Limits.CPUQuota (cores).
const MaxCPUQuota = 1024

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

	// CFS bandwidth (the cpu controller; all 0 without it or without a
	// quota): the quota as read back, in cores (0 = none), and the
	// cumulative cpu.stat counters: periods with the group runnable,
	// periods in which it hit the quota, and the time it waited.
	CPUQuota       float64
	NrPeriods      uint64
	NrThrottled    uint64
	ThrottledNanos uint64
}

// MemNeed is what the group's processes need: anonymous plus kernel
// memory, page cache left out (the headline idle and under-load figure).
func (s Stats) MemNeed() uint64 { return s.MemAnon + s.MemKernel }

// quotaMicros is a quota in cores as microseconds per QuotaPeriodMicros
// (at least the kernel's minimum of 1 ms).
func quotaMicros(cores float64) int64 {
	return max(int64(cores*QuotaPeriodMicros+0.5), 1000)
}

// coresOf turns a quota and period in microseconds into cores; a negative
// quota ("-1", "max") or period is no quota (0).
func coresOf(quota, period int64) float64 {
	if quota <= 0 || period <= 0 {
		return 0
	}
	return float64(quota) / float64(period)
}
