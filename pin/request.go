package pin

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseCountOrList reads a CPU request as flags take it: "" or "auto" means
// let the planner decide (0, nil); a bare number is a CPU count ("2"); any
// other text is a CPU list ("0,2-3"). A single CPU as a list is written as a
// range: "3-3".
func ParseCountOrList(s string) (count int, cpus CPUSet, err error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "auto") {
		return 0, nil, nil
	}
	if n, err := strconv.Atoi(s); err == nil {
		if n < 0 || n > MaxCPU+1 {
			return 0, nil, fmt.Errorf("CPU count %d is out of range: give 0-%d, or a CPU list such as 0,2-3", n, MaxCPU+1)
		}
		return n, nil, nil
	}
	cpus, err = ParseList(s)
	if err != nil {
		return 0, nil, err
	}
	return 0, cpus, nil
}
