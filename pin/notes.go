package pin

import (
	"fmt"
	"strings"
)

// group is a named cpuset of a plan.
type group struct {
	name string
	cpus CPUSet
}

// notes describes plan p in words: sharing, sibling pairs, idle CPUs.
func notes(t *Topology, online, usable CPUSet, p Plan, smtFallback bool) []string {
	var out []string
	if outside := online.Minus(usable); len(outside) > 0 {
		verb := "are"
		if len(outside) == 1 {
			verb = "is"
		}
		out = append(out, fmt.Sprintf("%s %s online but outside this process's allowed set (taskset/cgroup cpuset): the plan leaves them out", cpuWord(outside), verb))
	}
	groups := []group{{"server", p.Server}, {"loadgen", p.Gen}, {"backend", p.Backend}}
	if p.Server.Equal(p.Gen) && p.Server.Equal(p.Backend) {
		out = append(out, fmt.Sprintf("server, loadgen and backend all share %s (%d usable): the loadgen and backend take CPU time from the server, so treat its results as relative only", cpuWord(p.Server), len(usable)))
	} else {
		for i := range groups {
			for j := i + 1; j < len(groups); j++ {
				a, b := groups[i], groups[j]
				if both := a.cpus.Intersect(b.cpus); len(both) > 0 {
					out = append(out, fmt.Sprintf("%s shares %s with %s", b.name, cpuWord(both), a.name))
				}
			}
		}
	}
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			if pairs := siblingPairs(t, groups[i].cpus, groups[j].cpus); len(pairs) > 0 {
				out = append(out, fmt.Sprintf("%s and %s run on hyperthread siblings of the same core (%s): they compete for that core", groups[i].name, groups[j].name, strings.Join(pairs, ", ")))
			}
		}
	}
	others := p.Gen.Union(p.Backend)
	if len(p.Server.Intersect(others)) == 0 && len(siblingPairs(t, p.Server, others)) == 0 {
		out = append(out, fmt.Sprintf("server has %s to itself", cpuWord(p.Server)))
	}
	used := p.Server.Union(others)
	idleSib := t.siblingsOf(p.Server, usable).Minus(used)
	if len(idleSib) > 0 {
		out = append(out, fmt.Sprintf("hyperthread siblings of the server kept idle: %s", cpuWord(idleSib)))
	}
	if smtFallback {
		out = append(out, fmt.Sprintf("not enough cores (%d usable) for this request to keep the server's hyperthread siblings idle", len(t.Cores(usable))))
	}
	if idle := usable.Minus(used).Minus(idleSib); len(idle) > 0 {
		out = append(out, fmt.Sprintf("left idle: %s", cpuWord(idle)))
	}
	return out
}

// siblingPairs lists "a/b" for CPUs a of x and b of y (each only in its own
// group) that are distinct hyperthreads of one core.
func siblingPairs(t *Topology, x, y CPUSet) []string {
	var pairs []string
	for _, a := range x.Minus(y) {
		ca, ok := t.CPU(a)
		if !ok {
			continue
		}
		for _, b := range y.Minus(x) {
			if b != a && ca.Siblings.Contains(b) {
				pairs = append(pairs, fmt.Sprintf("%d/%d", a, b))
			}
		}
	}
	return pairs
}

// cpuWord renders s as "CPU 3" or "CPUs 0,2-5".
func cpuWord(s CPUSet) string {
	if len(s) == 1 {
		return "CPU " + s.String()
	}
	return "CPUs " + s.String()
}
