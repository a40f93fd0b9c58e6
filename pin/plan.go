package pin

import (
	"errors"
	"fmt"
)

// PlanRequest says what the lab's children want. A count of 0 lets the
// planner decide; an explicit CPU list wins over the count of its group.
type PlanRequest struct {
	Server, Backend, Gen int // wanted CPU counts; 0 = let the planner decide

	// ServerCPUs, BackendCPUs and GenCPUs pin a group to exact CPUs.
	ServerCPUs, BackendCPUs, GenCPUs CPUSet
}

// Plan holds one cpuset per child group. Notes say in words which groups
// share a core or CPU and which hyperthread siblings are kept idle.
type Plan struct {
	Server  CPUSet   `json:"server"`
	Backend CPUSet   `json:"backend"`
	Gen     CPUSet   `json:"loadgen"`
	Notes   []string `json:"notes,omitempty"`
}

// MakePlan splits the online CPUs of t that are also in allowed between the
// server under test, the backend and the load generator.
//
// Defaults: the server gets one CPU on each of max(1, cores/4) cores with
// their hyperthread siblings kept idle when enough cores remain; the backend
// gets as many whole cores as the server (at most all but one of the rest);
// the loadgen gets the rest. With two CPUs the server gets the first, the
// loadgen the second, and the backend shares the loadgen's CPU; with one CPU
// all three share it. Groups are laid out in CPU order: server, loadgen,
// backend.
func MakePlan(t *Topology, allowed CPUSet, req PlanRequest) (Plan, error) {
	if t == nil || len(t.CPUs) == 0 {
		return Plan{}, errors.New("empty CPU topology: read it with ReadTopology first")
	}
	online := t.Online()
	usable := online.Intersect(allowed)
	if len(usable) == 0 {
		return Plan{}, fmt.Errorf("none of the online CPUs (%s) is in the allowed set (%s); check taskset/cgroup cpuset", online, allowed)
	}
	if err := validate(req, usable); err != nil {
		return Plan{}, err
	}
	p, _ := layout(t, usable, req, true)
	smtFallback := false
	if !p.ok {
		var err error
		if p, err = layout(t, usable, req, false); err != nil {
			return Plan{}, err
		}
		smtFallback = len(t.siblingsOf(p.plan.Server, usable)) > 0
	}
	p.plan.Notes = notes(t, online, usable, p.plan, smtFallback)
	return p.plan, nil
}

// validate checks counts and explicit lists against the usable CPUs.
func validate(req PlanRequest, usable CPUSet) error {
	for _, g := range []struct {
		name  string
		n     int
		fixed CPUSet
	}{{"server", req.Server, req.ServerCPUs}, {"backend", req.Backend, req.BackendCPUs}, {"loadgen", req.Gen, req.GenCPUs}} {
		if g.n < 0 {
			return fmt.Errorf("%s CPU count %d is negative: use 0 to let the planner decide", g.name, g.n)
		}
		if g.n > len(usable) {
			return fmt.Errorf("%s wants %d CPUs but only %d are usable (%s)", g.name, g.n, len(usable), usable)
		}
		if err := checkWithin(g.fixed, usable); err != nil {
			return fmt.Errorf("%s CPUs %s: %w", g.name, g.fixed, err)
		}
	}
	return nil
}

// attempt is one try at a layout.
type attempt struct {
	plan Plan
	ok   bool // false: this mode cannot satisfy the request
}

// layout places the groups. With wholeCores the server takes one CPU per
// core and its siblings are kept idle; ok is false when that leaves too
// little for the other groups.
func layout(t *Topology, usable CPUSet, req PlanRequest, wholeCores bool) (attempt, error) {
	fixedOthers := req.GenCPUs.Union(req.BackendCPUs)
	cores := t.Cores(usable)

	var server, reserved CPUSet
	switch {
	case len(req.ServerCPUs) > 0:
		server = req.ServerCPUs
		if wholeCores {
			reserved = t.siblingsOf(server, usable).Minus(fixedOthers)
		}
	case wholeCores:
		n := req.Server
		if n == 0 {
			n = max(1, len(cores)/4)
		}
		for _, core := range cores {
			if len(server) == n {
				break
			}
			if len(core.Intersect(fixedOthers)) > 0 {
				continue
			}
			server = append(server, core[0])
			reserved = append(reserved, core[1:]...)
		}
		if len(server) < n {
			return attempt{}, nil
		}
	default:
		n := req.Server
		if n == 0 {
			n = 1
		}
		free := usable.Minus(fixedOthers)
		if len(free) < n {
			free = usable
		}
		server = coreOrder(cores, free)[:n]
	}
	server = NewCPUSet(server...)
	reserved = NewCPUSet(reserved...)

	pool := coreOrder(cores, usable.Minus(server).Minus(reserved).Minus(fixedOthers))
	needPool := len(req.GenCPUs) == 0 || len(req.BackendCPUs) == 0
	if wholeCores && needPool && len(pool) == 0 {
		return attempt{}, nil
	}
	loadgen, backend, err := splitPool(t, pool, req, len(server))
	if err != nil {
		if wholeCores {
			return attempt{}, nil // retry with the siblings in the pool
		}
		return attempt{}, err
	}
	switch {
	case len(loadgen) == 0 && len(backend) == 0:
		loadgen, backend = server, server
	case len(loadgen) == 0:
		loadgen = backend
	case len(backend) == 0:
		backend = loadgen
	}
	return attempt{plan: Plan{Server: server, Gen: loadgen, Backend: backend}, ok: true}, nil
}

// splitPool gives the loadgen the front of pool and the backend its back.
// An empty result means that group shares another group's CPUs.
func splitPool(t *Topology, pool []int, req PlanRequest, serverN int) (loadgen, backend CPUSet, err error) {
	if len(req.GenCPUs) > 0 && len(req.BackendCPUs) > 0 {
		return req.GenCPUs, req.BackendCPUs, nil
	}
	avail := len(pool)
	l, b := req.Gen, req.Backend
	if len(req.GenCPUs) > 0 {
		l = 0
	}
	if len(req.BackendCPUs) > 0 {
		b = 0
	}
	if l > avail {
		return nil, nil, fmt.Errorf("loadgen wants %d CPUs but only %d are left after the server and backend; lower the loadgen count", l, avail)
	}
	if b > avail {
		return nil, nil, fmt.Errorf("backend wants %d CPUs but only %d are left after the server and loadgen; lower the backend count", b, avail)
	}
	defB := defaultBackend(t, pool, serverN)
	switch {
	case len(req.GenCPUs) > 0: // backend from the pool
		if b == 0 {
			b = min(max(defB, 1), avail)
		}
	case len(req.BackendCPUs) > 0: // loadgen from the pool
		if l == 0 {
			l = avail
		}
	case l == 0 && b == 0:
		b = defB
		l = avail - b
	case l == 0:
		l = avail - b
	case b == 0:
		b = min(defB, avail-l)
	}
	if len(req.GenCPUs) > 0 {
		loadgen = req.GenCPUs
	} else if l > 0 {
		loadgen = NewCPUSet(pool[:l]...)
	}
	if len(req.BackendCPUs) > 0 {
		backend = req.BackendCPUs
	} else if b > 0 {
		backend = NewCPUSet(pool[avail-b:]...)
	}
	return loadgen, backend, nil
}

// defaultBackend is the backend's default CPU count from pool: as many whole
// cores as the server has CPUs, leaving at least one core for the loadgen;
// half a lone core; nothing (share) when the pool has at most one CPU.
func defaultBackend(t *Topology, pool []int, serverN int) int {
	if len(pool) <= 1 {
		return 0
	}
	cores := t.Cores(NewCPUSet(pool...))
	if len(cores) == 1 {
		return len(pool) / 2
	}
	k := min(max(serverN, 1), len(cores)-1)
	n := 0
	for _, c := range cores[len(cores)-k:] {
		n += len(c)
	}
	return n
}

// coreOrder lists the CPUs of set core by core (cores ordered by lowest id).
func coreOrder(cores []CPUSet, set CPUSet) []int {
	var out []int
	for _, c := range cores {
		for _, id := range c {
			if set.Contains(id) {
				out = append(out, id)
			}
		}
	}
	return out
}

// siblingsOf returns the usable hyperthread siblings of s that are not in s.
func (t *Topology) siblingsOf(s, usable CPUSet) CPUSet {
	var out CPUSet
	for _, id := range s {
		if c, ok := t.CPU(id); ok {
			out = out.Union(c.Siblings)
		}
	}
	return out.Intersect(usable).Minus(s)
}
