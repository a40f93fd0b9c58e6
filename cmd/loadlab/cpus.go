package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// TODO(lead): replace parseCPUList and restrictProcess with pin.RestrictProcess
// (package pin) once it lands; they exist only so `serve --cpus` works now.

// maxCPUs is the size of a CPU affinity set (glibc CPU_SETSIZE).
const maxCPUs = 1024

// parseCPUList parses a Linux CPU list such as "0", "0-3" or "0,2-3,6".
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	seen := map[int]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= maxCPUs {
			return nil, fmt.Errorf("bad CPU list %q: want numbers and ranges like 0,2-3", s)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	return cpus, nil
}

// checkCPUsAllowed reports the first CPU in cpus that this process may not
// run on.
func checkCPUsAllowed(cpus []int) error {
	var cur unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cur); err != nil {
		return fmt.Errorf("read CPU affinity: %v", err)
	}
	for _, c := range cpus {
		if !cur.IsSet(c) {
			return fmt.Errorf("CPU %d is not available to this process (it may use %d CPUs; see /sys/devices/system/cpu/online)", c, cur.Count())
		}
	}
	return nil
}

// restrictProcess pins every thread of this process to cpus (threads created
// later inherit the mask) and sets GOMAXPROCS to len(cpus).
func restrictProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	done := map[int]bool{}
	for pass := 0; pass < 10; pass++ { // repeat until no new thread shows up
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("list threads: %v", err)
		}
		fresh := 0
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d to CPUs %v: %v", tid, cpus, err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			break
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}
