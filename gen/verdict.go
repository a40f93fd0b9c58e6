package gen

import (
	"fmt"
	"strings"
)

// Self-check thresholds: beyond them the generator may have shaped the
// result and says so.
const (
	BusyLimit  = 0.90 // fraction of a loop's wall time on CPU
	LagLimitUs = 1000 // open loop: p99 of the generator's own send lag
)

// verdict sets Bottleneck and Reason from the loops' busy fractions and,
// in open loop, the schedule lag.
func (g *Generator) verdict(open bool) {
	var reasons []string
	for i, b := range g.Busy {
		if b > BusyLimit {
			cpu := -1
			if i < len(g.CPUs) {
				cpu = g.CPUs[i]
			}
			reasons = append(reasons, fmt.Sprintf("loop %d (cpu %d) was %.0f%% busy (limit %.0f%%): add CPUs with --cpus or lower the load", i, cpu, b*100, BusyLimit*100))
		}
	}
	if open && g.LagP99us > LagLimitUs {
		reasons = append(reasons, fmt.Sprintf("open-loop send lag p99 %d µs exceeds %d µs: the generator could not keep its schedule", g.LagP99us, LagLimitUs))
	}
	g.Bottleneck = len(reasons) > 0
	g.Reason = strings.Join(reasons, "; ")
}
