package pin

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// toMask converts s to a kernel affinity mask; every id must be <= MaxCPU.
func toMask(s CPUSet) (unix.CPUSetDynamic, error) {
	m := unix.NewCPUSet(MaxCPU + 1)
	for _, c := range s {
		if c < 0 || c > MaxCPU {
			return nil, fmt.Errorf("cpu %d is outside 0-%d", c, MaxCPU)
		}
		m.Set(c)
	}
	return m, nil
}

// fromMask lists the CPUs set in m.
func fromMask(m unix.CPUSetDynamic) CPUSet {
	var out CPUSet
	for c := 0; c <= MaxCPU; c++ {
		if m.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// getAffinity returns the affinity of thread tid (0 = calling thread).
func getAffinity(tid int) (CPUSet, error) {
	m := unix.NewCPUSet(MaxCPU + 1)
	if err := unix.SchedGetaffinityDynamic(tid, m); err != nil {
		return nil, err
	}
	return fromMask(m), nil
}

// setAffinity sets the affinity of thread tid (0 = calling thread) to s.
func setAffinity(tid int, s CPUSet) error {
	m, err := toMask(s)
	if err != nil {
		return err
	}
	return unix.SchedSetaffinityDynamic(tid, m)
}

// Allowed returns the CPUs this process may run on: sched_getaffinity(0)
// read on a fresh goroutine, so on an unpinned thread even when the caller's
// own thread is pinned. taskset and the cgroup cpuset both limit it.
func Allowed() (CPUSet, error) {
	type result struct {
		s   CPUSet
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := getAffinity(0)
		ch <- result{s, err}
	}()
	r := <-ch
	if r.err != nil {
		return nil, fmt.Errorf("read CPU affinity: %w (is sched_getaffinity blocked by a seccomp filter?)", r.err)
	}
	return r.s, nil
}

// CheckAllowed returns an error naming the first CPU of s that this process
// may not use, or an error if s is empty.
func CheckAllowed(s CPUSet) error {
	if len(s) == 0 {
		return errors.New("empty CPU set: give at least one CPU id")
	}
	allowed, err := Allowed()
	if err != nil {
		return err
	}
	return checkWithin(s, allowed)
}

// checkWithin is CheckAllowed against a given allowed set.
func checkWithin(s, allowed CPUSet) error {
	for _, c := range s {
		if !allowed.Contains(c) {
			return fmt.Errorf("cpu %d is outside the CPUs this process may use (%s); pick from %s (see taskset/cgroup cpuset)", c, allowed, allowed)
		}
	}
	return nil
}

// PinThread locks the calling goroutine to its OS thread and binds that
// thread to cpu. On success the goroutine stays locked; the caller may call
// runtime.UnlockOSThread only after restoring the thread's affinity, or let
// the goroutine exit so the runtime discards the thread.
func PinThread(cpu int) error {
	return PinThreadSet(CPUSet{cpu})
}

// PinThreadSet is PinThread for a set of CPUs. On failure the thread's
// previous affinity is restored and the goroutine unlocked; if even the
// restore fails the goroutine stays locked, so the runtime discards the thread
// when the goroutine exits.
func PinThreadSet(s CPUSet) error {
	s = NewCPUSet(s...)
	if err := CheckAllowed(s); err != nil {
		return err
	}
	runtime.LockOSThread()
	before, err := getAffinity(0)
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("read thread affinity: %w", err)
	}
	if err := setAffinity(0, s); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("pin thread to CPUs %s: %w", s, err)
	}
	got, err := getAffinity(0)
	if err == nil && got.Equal(s) {
		return nil
	}
	if err == nil {
		err = fmt.Errorf("kernel applied CPUs %s instead of %s (a cgroup cpuset may have changed underneath)", got, s)
	}
	if setAffinity(0, before) == nil {
		runtime.UnlockOSThread()
	}
	return fmt.Errorf("pin thread to CPUs %s: %w", s, err)
}

// RestrictProcess sets the affinity of every thread of this process to s,
// so the Go runtime's threads stay on s; threads created later inherit it.
// Threads pinned earlier with PinThread are overwritten too: call it first.
func RestrictProcess(s CPUSet) error {
	s = NewCPUSet(s...)
	if err := CheckAllowed(s); err != nil {
		return err
	}
	return setProcess(s)
}

// RestoreProcess sets every thread of this process to s, typically the set
// Allowed returned before a RestrictProcess. Unlike RestrictProcess it
// does not check s against the current (restricted) affinity, which would
// refuse to widen it; the kernel still refuses CPUs outside the cpuset.
func RestoreProcess(s CPUSet) error {
	s = NewCPUSet(s...)
	if len(s) == 0 {
		return errors.New("empty CPU set: give at least one CPU id")
	}
	return setProcess(s)
}

// setProcess sets the affinity of every thread of this process to s.
func setProcess(s CPUSet) error {
	done := map[int]bool{}
	// A thread may start while we walk the list: walk until a pass finds no
	// new thread (bounded, as the runtime does not spawn threads forever).
	for pass := 0; pass < 10; pass++ {
		tids, err := threadIDs()
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			err := setAffinity(tid, s)
			if errors.Is(err, unix.ESRCH) {
				continue // the thread exited meanwhile
			}
			if err != nil {
				return fmt.Errorf("set affinity of thread %d to CPUs %s: %w", tid, s, err)
			}
			done[tid] = true
		}
		if fresh == 0 {
			return nil
		}
	}
	return fmt.Errorf("threads kept appearing while restricting the process to CPUs %s; retry once startup settles", s)
}

// threadIDs lists the thread ids in /proc/self/task.
func threadIDs() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("list threads: %w (is /proc mounted?)", err)
	}
	ids := make([]int, 0, len(ents))
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}
