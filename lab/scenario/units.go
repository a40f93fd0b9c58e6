package scenario

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
)

// UnitSpec is one scenario against one profile with one key type on one
// layout, before it runs.
type UnitSpec struct {
	ID       string
	Scenario *plan.Scenario
	Family   string
	Profile  proxy.Profile
	Key      certs.KeyType
	Layout   string
	Skip     string        // why it does not run ("" = it runs)
	BinErr   error         // the profile's binary is missing or refused (Skip says so)
	Estimate plan.Estimate // steps and generator time
}

// Finder reports whether a profile's binary is installed (nil error).
type Finder func(p proxy.Profile) error

// FindInstalled is the default Finder: the profile's own binary lookup.
func FindInstalled(p proxy.Profile) error {
	_, err := p.Find()
	return err
}

// BuildUnits lists the units of the plan in run order: layout by layout,
// proxy by proxy (one proxy at a time, as the seeds ran them), scenario by
// scenario, key by key. Profiles whose binary is missing, and h3 and
// keepalive-1k-h2 scenarios on profiles without HTTP/3 or HTTP/2, become
// skipped units with the reason.
func BuildUnits(p *plan.Plan, l *Layouts, find Finder) ([]UnitSpec, error) {
	if find == nil {
		find = FindInstalled
	}
	missing := map[string]string{}
	binErr := map[string]error{}
	profiles := map[string]proxy.Profile{}
	for _, name := range p.Profiles {
		prof, err := p.ProfileSet().Get(name)
		if err != nil {
			return nil, err
		}
		profiles[name] = prof
		if err := find(prof); err != nil {
			binErr[name] = err
			if errors.Is(err, proxy.ErrNotFound) {
				missing[name] = "not installed: " + err.Error()
			} else {
				missing[name] = "cannot use the binary: " + err.Error()
			}
		}
	}
	var units []UnitSpec
	for _, lay := range l.Layouts {
		for _, name := range p.Profiles {
			prof := profiles[name]
			for i := range p.Scenarios {
				s := &p.Scenarios[i]
				if l.ByScenario[s.Name] != lay.ID || !p.RunsOn(s, name) {
					continue
				}
				for _, k := range s.Keys {
					u := UnitSpec{
						ID:       UnitID(s.Name, name, k, lay.ID),
						Scenario: s, Family: l.Family[s.Name], Profile: prof,
						Key: certs.KeyType(k), Layout: lay.ID, Estimate: s.Estimate(),
					}
					switch {
					case missing[name] != "":
						u.Skip, u.BinErr = missing[name], binErr[name]
					case s.Kind == plan.KindH3 && !prof.Features.H3:
						u.Skip = fmt.Sprintf("%s serves no HTTP/3", name)
					case s.Kind == plan.KindKeepaliveH2 && !prof.Features.H2:
						u.Skip = fmt.Sprintf("%s serves no HTTP/2", name)
					}
					units = append(units, u)
				}
			}
		}
	}
	return units, nil
}

// UnitID names a unit: scenario/profile/key/layout.
func UnitID(scenario, profile, key, layout string) string {
	return strings.Join([]string{scenario, profile, key, layout}, "/")
}

// Overheads used by the budget (measured on a 2-core Debian 12 machine:
// nginx starts in well under a second, Caddy and Traefik in one to two).
const (
	proxyStartCost = 2 * time.Second        // start, wait for ready, stop
	envOpenCost    = 1 * time.Second        // a fresh session per unit: namespaces, cgroups, backend
	renewCost      = 500 * time.Millisecond // netns mode, per step: new namespaces, backend and proxy restarted (0.2 s for nginx here)
	checksCost     = 500 * time.Millisecond // the checks per proxy and key: bodies per protocol, WebSocket, Alt-Svc (0.3 s here)
	restartCost    = 500 * time.Millisecond // their restart, once per proxy and layout (nginx 0.1 s, Caddy 0.15 s here)
)

// Budget is what a plan will cost on this machine.
type Budget struct {
	Profiles []string      // installed profiles that run
	Missing  []string      // profiles skipped (not installed)
	Units    int           // units that run
	Skipped  int           // units that do not
	Steps    int           // generator runs (estimate), the ceilings' included
	Ceilings int           // generator ceilings measured (search scenarios x keys x layouts)
	Time     time.Duration // estimate
}

// MakeBudget adds up the units' estimates, a lab session and a proxy start
// per unit and round, the idle-memory measurement and the checks per proxy and key
// on each layout (their restart once per proxy and layout),
// and the certificates once. In netns mode every step renews the
// namespaces instead of cooling down after a failure.
func MakeBudget(p *plan.Plan, units []UnitSpec) Budget {
	var b Budget
	idle, restarted := map[string]bool{}, map[string]bool{}
	ceilings := map[string]bool{}
	stepCost := func(e plan.Estimate) time.Duration {
		t := e.Time
		if p.Net == plan.NetNetns {
			t += time.Duration(e.Steps)*renewCost - e.Cooldowns
		}
		return t
	}
	rounds := 1
	for _, u := range units {
		if u.Skip == "" {
			rounds = max(rounds, u.Scenario.Eff.Rounds)
		}
	}
	if c := p.Control; c != nil && rounds > 1 {
		// A control per round and one after the last: two steps against
		// loadlab serve in a session of its own.
		b.Steps += 2 * (rounds + 1)
		b.Time += time.Duration(rounds+1) * (2*c.Step.D() + stepCost(plan.Estimate{Steps: 2}) + proxyStartCost + envOpenCost)
	}
	for _, u := range units {
		if u.Skip != "" {
			b.Skipped++
			if strings.HasPrefix(u.Skip, "not installed") && !slices.Contains(b.Missing, u.Profile.Name) {
				b.Missing = append(b.Missing, u.Profile.Name)
			}
			continue
		}
		if !slices.Contains(b.Profiles, u.Profile.Name) {
			b.Profiles = append(b.Profiles, u.Profile.Name)
		}
		b.Units++
		b.Steps += u.Estimate.Steps
		b.Time += stepCost(u.Estimate) + time.Duration(max(u.Scenario.Eff.Rounds, 1))*(proxyStartCost+envOpenCost) // a session per round
		// The generator's ceiling: one more search per scenario and key
		// on a layout, before the first unit's.
		if c := CeilingID(u.Scenario.Name, string(u.Key), u.Layout); u.Scenario.Method == plan.MethodSearch && !ceilings[c] {
			ceilings[c] = true
			b.Ceilings++
			one := u.Scenario.SearchEstimate() // one search, whatever the units' runs
			b.Steps += one.Steps
			b.Time += stepCost(one) + proxyStartCost
		}
		if k := fmt.Sprintf("%s/%s/%s/%d", u.Layout, u.Profile.Name, u.Key, u.Scenario.NamedBackends()); !idle[k] { // with N routes: measured again
			idle[k] = true
			b.Time += IdleCost(p.IdleMemory) + checksCost
		}
		if k := u.Layout + "/" + u.Profile.Name; !restarted[k] {
			restarted[k] = true
			b.Time += restartCost
		}
	}
	return b
}

// IdleCost is how long the idle-memory measurement takes.
func IdleCost(m plan.IdleMemory) time.Duration {
	if m.Samples == 0 {
		return 0
	}
	return m.Quiet.D() + time.Duration(m.Samples-1)*m.Every.D() + time.Second
}

// String says the budget in one line.
func (b Budget) String() string {
	s := fmt.Sprintf("%d profiles (%s) x scenarios = %d runs, %d generator ceilings, about %d steps, estimated %s",
		len(b.Profiles), strings.Join(b.Profiles, ", "), b.Units, b.Ceilings, b.Steps, FormatDuration(b.Time))
	if len(b.Missing) > 0 {
		s += fmt.Sprintf("; not installed, skipped: %s", strings.Join(b.Missing, ", "))
	}
	return s
}

// FormatDuration writes d rounded to seconds, e.g. "9m40s".
func FormatDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
