package plan

import (
	"fmt"
	"slices"
	"strings"
)

// Seed is one finding of a published benchmark (a seed: the benchmarks
// the lab reproduces) that the plan sets out to show again: the seed's
// own number, cited word for word with its sentence, and where this run
// measures it. The report opens with one row per Seed: the seed's number,
// this run's, and whether the run reproduced it (the same effect in the
// same direction; the size may differ, and the row says by how much).
//
// The seed's number is a cited constant, never computed: Number is the
// text the row prints, Value the same number for the size comparison.
// Finding names the measurement (lab/report: seedMeasures), which reads
// the run's units in Scenarios on Profiles.
type Seed struct {
	Finding   string   `yaml:"finding" json:"finding"`                       // the measurement, e.g. cliff, pool-leak, key-factor, idle-memory
	Seed      string   `yaml:"seed" json:"seed"`                             // which seed: "001", "002", "003"
	Says      string   `yaml:"says" json:"says"`                             // the seed's sentence, verbatim
	Number    string   `yaml:"number" json:"number"`                         // the seed's number as the table prints it, e.g. "28,231 then 502"
	Value     float64  `yaml:"value,omitempty" json:"value,omitempty"`       // the same number, for "by how much" (0: the row compares no size)
	Scenarios []string `yaml:"scenarios" json:"scenarios"`                   // the plan's scenarios that measure it
	Profiles  []string `yaml:"profiles,omitempty" json:"profiles,omitempty"` // the profiles it compares (the measurement says which comes first)
	Keys      []string `yaml:"keys,omitempty" json:"keys,omitempty"`         // key types it compares (key-factor: p256 and the RSA one)
	Note      string   `yaml:"note,omitempty" json:"note,omitempty"`         // what differs from the seed's setup, printed beside the row
	// Numbers and Values, for a finding that cites one number per
	// profile (seed 001's table: Caddy, Traefik, NPM), are the seed's
	// number as printed and as a number for each of Profiles, in order;
	// Number is then the row's whole citation.
	Numbers []string  `yaml:"numbers,omitempty" json:"numbers,omitempty"`
	Values  []float64 `yaml:"values,omitempty" json:"values,omitempty"`
}

// ProfileNumber is the seed's number for profile (Numbers), "" when the
// seed cites none for it.
func (s Seed) ProfileNumber(profile string) string {
	if i := slices.Index(s.Profiles, profile); i >= 0 && i < len(s.Numbers) {
		return s.Numbers[i]
	}
	return ""
}

// ProfileValue is the seed's value for profile (Values), 0 when none.
func (s Seed) ProfileValue(profile string) float64 {
	if i := slices.Index(s.Profiles, profile); i >= 0 && i < len(s.Values) {
		return s.Values[i]
	}
	return 0
}

// validateSeeds checks that every seed names its finding, seed, sentence
// and number, and only scenarios and profiles the plan has.
func (p *Plan) validateSeeds() error {
	for i, s := range p.Seeds {
		where := fmt.Sprintf("seeds[%d] (%s)", i, s.Finding)
		for _, f := range []struct{ name, v string }{{"finding", s.Finding}, {"seed", s.Seed}, {"says", s.Says}, {"number", s.Number}} {
			if strings.TrimSpace(f.v) == "" {
				return fmt.Errorf("%s: %s is empty: a seed row cites the seed's finding, its sentence and its number", where, f.name)
			}
		}
		if len(s.Scenarios) == 0 {
			return fmt.Errorf("%s: scenarios is empty: name the scenario(s) that measure it", where)
		}
		for _, name := range s.Scenarios {
			if !slices.ContainsFunc(p.Scenarios, func(sc Scenario) bool { return sc.Name == name }) {
				return fmt.Errorf("%s: scenario %q is not in the plan", where, name)
			}
		}
		for _, name := range s.Profiles {
			if !slices.Contains(p.Profiles, name) {
				return fmt.Errorf("%s: profile %s is not in the plan's profiles (%s)", where, name, strings.Join(p.Profiles, ", "))
			}
		}
		if err := checkKeys(where+": keys", s.Keys); err != nil {
			return err
		}
		if bad(s.Value) || s.Value < 0 {
			return fmt.Errorf("%s: value must be a number >= 0", where)
		}
		for _, l := range []struct {
			name string
			n    int
		}{{"numbers", len(s.Numbers)}, {"values", len(s.Values)}} {
			if l.n > 0 && l.n != len(s.Profiles) {
				return fmt.Errorf("%s: %s has %d entries for %d profiles: give one per profile, in the order of profiles", where, l.name, l.n, len(s.Profiles))
			}
		}
		for _, v := range s.Values {
			if bad(v) || v < 0 {
				return fmt.Errorf("%s: values must be numbers >= 0", where)
			}
		}
	}
	return nil
}

// keepSeeds drops the seeds whose scenarios or profiles narrowing removed:
// the run cannot measure them. A seed citing a number per profile keeps
// the profiles left, with their numbers, while one is.
func (p *Plan) keepSeeds() {
	for i := range p.Seeds {
		s := &p.Seeds[i]
		if len(s.Numbers) == 0 && len(s.Values) == 0 {
			continue
		}
		var profiles, numbers []string
		var values []float64
		for j, name := range s.Profiles {
			if !slices.Contains(p.Profiles, name) {
				continue
			}
			profiles = append(profiles, name)
			if j < len(s.Numbers) {
				numbers = append(numbers, s.Numbers[j])
			}
			if j < len(s.Values) {
				values = append(values, s.Values[j])
			}
		}
		if len(profiles) > 0 {
			s.Profiles, s.Numbers, s.Values = profiles, numbers, values
		}
	}
	p.Seeds = slices.DeleteFunc(p.Seeds, func(s Seed) bool {
		for _, name := range s.Scenarios {
			if !slices.ContainsFunc(p.Scenarios, func(sc Scenario) bool { return sc.Name == name }) {
				return true
			}
		}
		for _, name := range s.Profiles {
			if !slices.Contains(p.Profiles, name) {
				return true
			}
		}
		return false
	})
}
