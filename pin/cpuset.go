package pin

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU id this package accepts.
const MaxCPU = 4095

// CPUSet is a sorted list of unique CPU ids.
type CPUSet []int

// NewCPUSet returns the sorted, de-duplicated set of cpus.
func NewCPUSet(cpus ...int) CPUSet {
	s := slices.Clone(cpus)
	slices.Sort(s)
	return CPUSet(slices.Compact(s))
}

// ParseList parses a kernel-style CPU list such as "0", "1-3" or "0,2-5".
// Spaces around numbers, dashes and commas are tolerated; overlapping parts
// are merged.
func ParseList(s string) (CPUSet, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty CPU list: give CPU ids like 0,2-5")
	}
	var seen [MaxCPU + 1]bool
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("CPU list %q has an empty element: write ids like 0,2-5", s)
		}
		if strings.HasPrefix(part, "-") {
			return nil, fmt.Errorf("CPU list %q: %q is negative; CPU ids start at 0", s, part)
		}
		loS, hiS, isRange := strings.Cut(part, "-")
		lo, err := parseCPU(s, loS)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if hi, err = parseCPU(s, hiS); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("CPU list %q: range %q runs backwards; write it as %d-%d", s, part, hi, lo)
			}
		}
		for c := lo; c <= hi; c++ {
			seen[c] = true
		}
	}
	var out CPUSet
	for c, ok := range seen {
		if ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// parseCPU parses one CPU id (decimal digits only) of list.
func parseCPU(list, s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("CPU list %q has a range with a missing end: write ranges like 2-5", list)
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("CPU list %q: %q is negative; CPU ids start at 0", list, s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("CPU list %q: %q is not a CPU id; use decimal ids like 0,2-5", list, s)
		}
	}
	trimmed := strings.TrimLeft(s, "0")
	if len(trimmed) > 4 {
		return 0, fmt.Errorf("CPU list %q: CPU %s is above the maximum %d", list, s, MaxCPU)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("CPU list %q: %q is not a CPU id; use decimal ids like 0,2-5", list, s)
	}
	if n > MaxCPU {
		return 0, fmt.Errorf("CPU list %q: CPU %d is above the maximum %d", list, n, MaxCPU)
	}
	return n, nil
}

// String returns the canonical list form, e.g. "0,2-5"; the empty set is "".
func (s CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Contains reports whether cpu is in s.
func (s CPUSet) Contains(cpu int) bool {
	_, ok := slices.BinarySearch(s, cpu)
	return ok
}

// Len returns the number of CPUs in s.
func (s CPUSet) Len() int { return len(s) }

// Equal reports whether s and o hold the same CPUs.
func (s CPUSet) Equal(o CPUSet) bool { return slices.Equal(s, o) }

// Union returns the CPUs in s or o.
func (s CPUSet) Union(o CPUSet) CPUSet {
	return NewCPUSet(append(slices.Clone(s), o...)...)
}

// Intersect returns the CPUs in both s and o.
func (s CPUSet) Intersect(o CPUSet) CPUSet {
	var out CPUSet
	for _, c := range s {
		if o.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// Minus returns the CPUs in s that are not in o.
func (s CPUSet) Minus(o CPUSet) CPUSet {
	var out CPUSet
	for _, c := range s {
		if !o.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// IsSubsetOf reports whether every CPU of s is in o.
func (s CPUSet) IsSubsetOf(o CPUSet) bool { return len(s.Minus(o)) == 0 }

// MarshalText encodes s in list form, so JSON and YAML show "0,2-5".
func (s CPUSet) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses list form; an empty text is the empty set.
func (s *CPUSet) UnmarshalText(b []byte) error {
	if strings.TrimSpace(string(b)) == "" {
		*s = nil
		return nil
	}
	v, err := ParseList(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}
