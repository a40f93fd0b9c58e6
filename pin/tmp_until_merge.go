package pin

// TEMPORARY: minimal versions of the pincerts branch API so gen compiles
// before that branch is merged. Deleted at merge.

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

type CPUSet []int

func ParseList(s string) (CPUSet, error) {
	var out CPUSet
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, ok := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("bad cpu list %q", s)
		}
		b := a
		if ok {
			if b, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("bad cpu list %q", s)
			}
		}
		for i := a; i <= b; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

func (s CPUSet) String() string {
	var b []string
	for _, c := range s {
		b = append(b, strconv.Itoa(c))
	}
	return strings.Join(b, ",")
}

func Allowed() (CPUSet, error) {
	var m unix.CPUSet
	if err := unix.SchedGetaffinity(0, &m); err != nil {
		return nil, err
	}
	var out CPUSet
	for i := 0; i < 1024; i++ {
		if m.IsSet(i) {
			out = append(out, i)
		}
	}
	return out, nil
}

func CheckAllowed(s CPUSet) error { return nil }

func PinThread(cpu int) error {
	runtime.LockOSThread()
	var m unix.CPUSet
	m.Set(cpu)
	return unix.SchedSetaffinity(0, &m)
}

func ThreadCPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
