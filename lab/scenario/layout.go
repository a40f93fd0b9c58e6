package scenario

import (
	"encoding/json"
	"fmt"

	"github.com/loadlab/loadlab/internal/fields"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

// Layouts says on which CPU layout each scenario runs.
type Layouts struct {
	Layouts    []results.Layout
	ByScenario map[string]string // scenario name -> layout ID (absent = skipped)
	Family     map[string]string // scenario name -> family (first scenario of the same test)
	Skipped    map[string]string // scenario name -> why it does not run
	Notes      []string          // what changed to fit this machine
}

// PlanLayouts lays out the CPU groups of every scenario on this machine
// (pin.MakePlan): the server gets what the scenario (or the plan) asks for;
// on a machine with fewer CPUs than asked it gets what fits (all but one
// usable CPU) and a note says so. A scenario that becomes identical to an
// earlier one that way (the 4-CPU copy of a 1-CPU test on a 2-CPU machine)
// is skipped with a note instead of run twice.
func PlanLayouts(p *plan.Plan, topo *pin.Topology, allowed pin.CPUSet) (*Layouts, error) {
	usable := topo.Online().Intersect(allowed)
	if len(usable) == 0 {
		return nil, fmt.Errorf("no usable CPU: none of the online CPUs %s is allowed (%s)", topo.Online(), allowed)
	}
	maxServer := max(1, len(usable)-1)
	bCount, bList, err := pin.ParseCountOrList(p.CPUs.Backend)
	if err != nil {
		return nil, fmt.Errorf("cpus.backend: %v", err)
	}
	lCount, lList, err := pin.ParseCountOrList(p.CPUs.Gen)
	if err != nil {
		return nil, fmt.Errorf("cpus.loadgen: %v", err)
	}
	out := &Layouts{ByScenario: map[string]string{}, Family: map[string]string{}, Skipped: map[string]string{}}
	families := map[string]string{} // spec without name and CPUs -> family
	seen := map[string]string{}     // spec + layout -> scenario name
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		req := p.CPUs.Server
		if s.ServerCPUs != "" {
			req = s.ServerCPUs
		}
		shared := req == plan.AllCPUs
		var count int
		var list pin.CPUSet
		if shared {
			// The other groups are placed as for a 1-CPU server; the
			// proxy's cpuset then widens over every usable CPU.
			count = 1
		} else if count, list, err = pin.ParseCountOrList(req); err != nil {
			return nil, fmt.Errorf("scenario %s: server CPUs: %v", s.Name, err)
		}
		var note string
		switch {
		case shared:
		case len(list) > 0:
			if !list.IsSubsetOf(usable) {
				return nil, fields.Errorf("scenario %s: server CPUs %s are not all usable here (usable: %s): set {ServerCPUs}", s.Name, list, usable)
			}
			if len(usable) > 1 && len(list) >= len(usable) {
				return nil, fmt.Errorf("scenario %s: server CPUs %s leave none for the generator and backend (usable: %s)", s.Name, list, usable)
			}
		case count > maxServer:
			note = fmt.Sprintf("scenario %s asks for %d server CPUs; this machine has %d usable (%s), so it runs with %d", s.Name, count, len(usable), usable, maxServer)
			count = maxServer
		}
		pp, err := pin.MakePlan(topo, allowed, pin.PlanRequest{Server: count, ServerCPUs: list, Backend: bCount, BackendCPUs: bList, Gen: lCount, GenCPUs: lList})
		if err != nil {
			return nil, fmt.Errorf("scenario %s: CPU layout: %v", s.Name, err)
		}
		if shared {
			// pin's notes (made again when the session opens) say which
			// groups share the server's CPUs.
			pp.Server = usable
		}
		id := out.add(req, pp)
		spec := specKey(s)
		if fam, ok := families[spec]; ok {
			out.Family[s.Name] = fam
		} else {
			families[spec] = s.Name
			out.Family[s.Name] = s.Name
		}
		if first, dup := seen[spec+"|"+id]; dup {
			why := fmt.Sprintf("scenario %s skipped: on this machine it is the same test as %s (%s)", s.Name, first, note)
			out.Skipped[s.Name] = why
			out.Notes = append(out.Notes, why)
			continue
		}
		seen[spec+"|"+id] = s.Name
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		out.ByScenario[s.Name] = id
	}
	return out, nil
}

// add returns the ID of the layout with pp's groups, adding it if new.
func (l *Layouts) add(req string, pp pin.Plan) string {
	for _, have := range l.Layouts {
		if have.Server.Equal(pp.Server) && have.Backend.Equal(pp.Backend) && have.Gen.Equal(pp.Gen) {
			return have.ID
		}
	}
	id := fmt.Sprintf("%dcpu", len(pp.Server))
	for _, have := range l.Layouts {
		if have.ID == id {
			id = fmt.Sprintf("%dcpu-%s", len(pp.Server), pp.Server)
		}
	}
	l.Layouts = append(l.Layouts, results.Layout{ID: id, Request: req, Plan: pp})
	return id
}

// specKey identifies what a scenario measures, apart from its name and
// server CPUs.
func specKey(s *plan.Scenario) string {
	c := *s
	c.Name, c.ServerCPUs = "", ""
	b, _ := json.Marshal(c)
	return string(b)
}
