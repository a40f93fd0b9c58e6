package plan

import (
	"math"
	"time"
)

// Estimate is the expected cost of one scenario run against one proxy with
// one key type, over all its rounds.
type Estimate struct {
	Steps     int           // generator runs
	Time      time.Duration // generator time plus expected cool-downs
	Cooldowns time.Duration // the cool-downs in Time (loopback mode waits them; netns mode renews the namespaces instead)
}

// Estimate returns the expected steps and time of s against one proxy and
// key: every run (a search's runs are whole searches). For a search it
// assumes every probe up to max, a full bisection,
// one round of confirmations and a cool-down at its cap after the first
// failed probe and after half the bisection steps; the real run usually
// takes less (probes stop at the first failure) but may take more when
// confirmations fail and step down.
func (s *Scenario) Estimate() Estimate {
	rounds := max(s.Eff.Rounds, 1)
	switch s.Method {
	case MethodFixed:
		n := max(len(s.Rates), 1) * s.Runs * rounds // rate_from: one rate
		return Estimate{Steps: n, Time: time.Duration(n) * s.Duration.D()}
	case MethodClosed:
		n := s.Runs * rounds
		return Estimate{Steps: n, Time: time.Duration(n) * s.Duration.D()}
	}
	one, later := s.SearchEstimate(), s.LaterSearchEstimate()
	n := max(s.Runs, 1)
	m := n * (rounds - 1)
	return Estimate{Steps: n*one.Steps + m*later.Steps, Time: time.Duration(n)*one.Time + time.Duration(m)*later.Time,
		Cooldowns: time.Duration(n)*one.Cooldowns + time.Duration(m)*later.Cooldowns}
}

// LaterSearchEstimate is the expected cost of a search in a later round,
// which starts from the earlier rounds' bracket (search.Config.Prior): its
// pass and its failure probed, one bisection step, the confirmations, and
// one cool-down at its cap.
func (s *Scenario) LaterSearchEstimate() Estimate {
	se := s.Eff.Search
	cool := se.CooldownCap.D()
	return Estimate{Steps: 3 + se.ConfirmRuns, Time: 3*se.Step.D() + time.Duration(se.ConfirmRuns)*se.ConfirmStep.D() + cool, Cooldowns: cool}
}

// SearchEstimate is the expected cost of one of a search scenario's runs
// (Estimate has all of them; the generator's ceiling is one).
func (s *Scenario) SearchEstimate() Estimate {
	se := s.Eff.Search
	probes, bisect := se.probeSteps(), se.bisectSteps()
	steps := probes + bisect + se.ConfirmRuns
	t := time.Duration(probes+bisect)*se.Step.D() + time.Duration(se.ConfirmRuns)*se.ConfirmStep.D()
	fails := 1 + bisect/2
	cool := time.Duration(fails) * se.CooldownCap.D()
	return Estimate{Steps: steps, Time: t + cool, Cooldowns: cool}
}

// probeSteps is the number of growth steps from Start to Max.
func (s Search) probeSteps() int {
	if s.Start <= 0 || s.Growth <= 1 || s.Max < s.Start {
		return 1
	}
	n := int(math.Floor(math.Log(s.Max/s.Start)/math.Log(s.Growth)+1e-9)) + 1
	if s.Start*math.Pow(s.Growth, float64(n-1)) < s.Max {
		n++ // the last probe is Max itself
	}
	return n
}

// bisectSteps is the number of halvings that bring one growth interval
// within Precision.
func (s Search) bisectSteps() int {
	if s.Precision <= 0 || s.Growth <= 1 {
		return 0
	}
	w := s.Growth - 1 // interval width relative to the last pass
	n := 0
	for w > s.Precision && n < 64 {
		w /= 2
		n++
	}
	return n
}
