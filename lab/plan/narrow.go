package plan

import (
	"fmt"
	"github.com/loadlab/loadlab/internal/fields"
	"math"
	"slices"
	"strings"
	"time"
)

// Selection narrows a plan from the command line. Empty lists keep the
// plan's own.
type Selection struct {
	Profiles  []string // subset of the plan's profiles
	Scenarios []string // scenario names or kinds in the plan
	Keys      []string // subset of the key types the plan uses
}

// Narrow keeps only the selected profiles, scenarios and keys, in the
// plan's order. Naming something the plan does not have is an error that
// lists what it has; a scenario left without keys is dropped with a note.
func (p *Plan) Narrow(sel Selection) error {
	if len(sel.Profiles) > 0 {
		for _, name := range sel.Profiles {
			if !slices.Contains(p.Profiles, name) {
				return fields.Errorf("{Selection.Profiles}: %s is not in plan %s (it has %s): copy the plan (show it and save it to a file), add the profile, and run that file", name, p.Name, strings.Join(p.Profiles, ", "))
			}
		}
		p.Profiles = slices.DeleteFunc(p.Profiles, func(n string) bool { return !slices.Contains(sel.Profiles, n) })
		var kept []Scenario
		for _, s := range p.Scenarios {
			if len(s.Profiles) > 0 {
				s.Profiles = slices.DeleteFunc(slices.Clone(s.Profiles), func(n string) bool { return !slices.Contains(sel.Profiles, n) })
				if len(s.Profiles) == 0 {
					p.Notes = append(p.Notes, fmt.Sprintf("scenario %s dropped: it runs on none of the selected profiles %s", s.label(), strings.Join(sel.Profiles, ",")))
					continue
				}
			} else if !slices.ContainsFunc(p.Profiles, func(n string) bool { return p.RunsOn(&s, n) }) {
				p.Notes = append(p.Notes, fmt.Sprintf("scenario %s dropped: none of the selected profiles %s is of its role (%s)", s.label(), strings.Join(sel.Profiles, ","), s.role()))
				continue
			}
			kept = append(kept, s)
		}
		if len(kept) == 0 {
			return fields.Errorf("{Selection.Profiles} %s: no scenario of plan %s runs on them", strings.Join(sel.Profiles, ","), p.Name)
		}
		p.Scenarios = kept
	}
	if len(sel.Scenarios) > 0 {
		for _, name := range sel.Scenarios {
			if !slices.ContainsFunc(p.Scenarios, func(s Scenario) bool { return s.Name == name || s.Kind == name }) {
				return fields.Errorf("{Selection.Scenarios}: %s is not in plan %s (it has %s)", name, p.Name, strings.Join(p.ScenarioNames(), ", "))
			}
		}
		keep := map[string]bool{}
		for _, s := range p.Scenarios {
			if slices.Contains(sel.Scenarios, s.Name) || slices.Contains(sel.Scenarios, s.Kind) {
				keep[s.label()] = true
			}
		}
		// A scenario whose rate comes from another's search keeps that one.
		for _, s := range p.Scenarios {
			if rf := s.RateFrom; keep[s.label()] && rf != nil && !keep[rf.Scenario] {
				keep[rf.Scenario] = true
				p.Notes = append(p.Notes, fmt.Sprintf("scenario %s kept: %s's rate comes from its search (rate_from)", rf.Scenario, s.label()))
			}
		}
		p.Scenarios = slices.DeleteFunc(p.Scenarios, func(s Scenario) bool { return !keep[s.label()] })
	}
	if len(sel.Keys) > 0 {
		used := p.usedKeys()
		for _, k := range sel.Keys {
			if !slices.Contains(used, k) {
				return fields.Errorf("{Selection.Keys}: %s is not used by plan %s (it uses %s)", k, p.Name, strings.Join(used, ", "))
			}
		}
		keep := func(k string) bool { return !slices.Contains(sel.Keys, k) }
		p.Keys = slices.DeleteFunc(p.Keys, keep)
		if len(p.Keys) == 0 {
			p.Keys = slices.Clone(sel.Keys[:1])
		}
		var kept []Scenario
		for _, s := range p.Scenarios {
			s.Keys = slices.DeleteFunc(s.Keys, keep)
			if len(s.Keys) == 0 {
				p.Notes = append(p.Notes, fmt.Sprintf("scenario %s dropped: the selected keys %s leave it no key type", s.Name, strings.Join(sel.Keys, ",")))
				continue
			}
			kept = append(kept, s)
		}
		if len(kept) == 0 {
			return fields.Errorf("{Selection.Keys} %s leaves no scenario of plan %s", strings.Join(sel.Keys, ","), p.Name)
		}
		p.Scenarios = kept
	}
	p.keepSeeds()
	return nil
}

// ScenarioNames lists the scenario names in plan order.
func (p *Plan) ScenarioNames() []string {
	var names []string
	for _, s := range p.Scenarios {
		names = append(names, s.Name)
	}
	return names
}

// usedKeys lists every key type the plan or one of its scenarios names.
func (p *Plan) usedKeys() []string {
	used := slices.Clone(p.Keys)
	for _, s := range p.Scenarios {
		for _, k := range s.Keys {
			if !slices.Contains(used, k) {
				used = append(used, k)
			}
		}
	}
	return used
}

// Scale multiplies every duration of the plan by f: search steps, discard,
// confirmation steps, cool-down cap, scenario durations and warmups, and
// the idle-memory wait (not the per-request timeout). It is for quick
// looks and tests (--step-scale 0.1). Validate afterwards: a duration
// scaled to nothing is an error there.
func (p *Plan) Scale(f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > 100 {
		return fields.Errorf("{StepScale} must be > 0 and <= 100 (got %g)", f)
	}
	if f == 1 {
		return nil
	}
	sc := func(d *Duration) { *d = Duration(time.Duration(math.Round(float64(*d) * f))) }
	sc(&p.IdleMemory.Quiet)
	sc(&p.IdleMemory.Every)
	scaleSearch(&p.Search, sc)
	for i := range p.Scenarios {
		s := &p.Scenarios[i]
		sc(&s.Duration)
		sc(&s.Warmup)
		scaleSearch(&s.Eff.Search, sc)
	}
	p.Notes = append(p.Notes, fmt.Sprintf("every duration scaled by %g (--step-scale)", f))
	return nil
}

func scaleSearch(s *Search, sc func(*Duration)) {
	sc(&s.Step)
	sc(&s.Discard)
	sc(&s.ConfirmStep)
	sc(&s.CooldownCap)
}
