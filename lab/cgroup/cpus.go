package cgroup

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCPUList checks a cpuset list such as "0-1,3" (the format of
// cpuset.cpus and taskset -c) and returns the CPU numbers it names, in
// order. An empty list is an error.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty CPU list")
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 0 {
			return nil, fmt.Errorf("bad CPU list %q: want numbers and ranges like 0-1,3", s)
		}
		b := a
		if isRange {
			b, err = strconv.Atoi(strings.TrimSpace(hi))
			if err != nil || b < a {
				return nil, fmt.Errorf("bad CPU list %q: want numbers and ranges like 0-1,3", s)
			}
		}
		if b-a > 8192 {
			return nil, fmt.Errorf("bad CPU list %q: range too large", s)
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}
