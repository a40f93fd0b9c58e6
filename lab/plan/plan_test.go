package plan

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/proxy"
)

func TestBuiltinsLoad(t *testing.T) {
	names := BuiltinNames()
	if strings.Join(names, ",") != "quick,seed-001,seed-2026,sumguy" {
		t.Fatalf("built-ins %v", names)
	}
	for _, name := range names {
		p, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.Name != name {
			t.Errorf("%s: name %q", name, p.Name)
		}
		// what `plan show` prints must be a plan that loads the same
		text, _ := BuiltinText(name)
		q, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: show output does not parse: %v", name, err)
		}
		if err := q.Check(); err != nil {
			t.Fatal(err)
		}
		// and the marshalled, resolved form too
		out, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		r, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: marshalled plan does not parse: %v\n%s", name, err, out)
		}
		if err := r.Check(); err != nil {
			t.Fatalf("%s: marshalled plan invalid: %v", name, err)
		}
		for i := range p.Scenarios {
			if r.Scenarios[i].Eff != p.Scenarios[i].Eff {
				t.Errorf("%s: scenario %s effective settings changed in the round trip", name, p.Scenarios[i].Name)
			}
		}
	}
}

func TestSeed2026Method(t *testing.T) {
	p, err := Load("seed-2026")
	if err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios[0].Eff.Search
	if s.Start != 100 || s.Growth != 2 || s.Precision != 0.08 || s.Step.D() != 30*time.Second || s.Discard.D() != 6*time.Second ||
		s.ConfirmRuns != 3 || s.ConfirmStep.D() != 75*time.Second || s.StepDown != 0.08 || s.CooldownCap.D() != 100*time.Second {
		t.Fatalf("search %+v is not seed 002's method", s)
	}
	if p.Scenarios[0].Eff.Pass != DefaultPass() {
		t.Fatalf("pass %+v", p.Scenarios[0].Eff.Pass)
	}
	var hs *Scenario
	for i := range p.Scenarios {
		if p.Scenarios[i].Name == "handshake" {
			hs = &p.Scenarios[i]
		}
	}
	if hs == nil || strings.Join(hs.Keys, ",") != "p256,rsa2048,rsa4096" {
		t.Fatalf("handshake scenario %+v must cover every key type", hs)
	}
	if ka := p.Scenarios[0]; strings.Join(ka.Keys, ",") != "p256" || ka.Path != "/1k" || ka.Method != MethodSearch {
		t.Fatalf("keepalive scenario %+v", ka)
	}
}

func TestOverridesArePartial(t *testing.T) {
	p, err := Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	var hs Scenario
	for _, s := range p.Scenarios {
		if s.Kind == KindHandshake && hs.Name == "" {
			hs = s
		}
	}
	e := hs.Eff.Search
	if e.Start != 1000 || e.Max != 8000 {
		t.Fatalf("override not applied: %+v", e)
	}
	if hs.Name != "handshake" {
		t.Fatalf("first handshake scenario %s", hs.Name)
	}
	if e.Step != p.Search.Step || e.Precision != p.Search.Precision || e.ConfirmRuns != p.Search.ConfirmRuns {
		t.Fatalf("fields without override must come from the plan: %+v vs %+v", e, p.Search)
	}
}

const minimal = `
name: t
profiles: [nginx-stock]
scenarios:
  - kind: keepalive-1k
`

func TestMinimalPlanGetsDefaults(t *testing.T) {
	p, err := Parse([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	s := p.Scenarios[0]
	if s.Name != "keepalive-1k" || s.Eff.Search != DefaultSearch() || s.Eff.Pass != DefaultPass() || p.Net != NetLoopback || p.Timeout.D() != DefaultTimeout {
		t.Fatalf("defaults: %+v %+v", p, s)
	}
}

func TestValidationErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"name: t\nprofiles: [nginx-bogus]\nscenarios: [{kind: keepalive-1k}]", `unknown profile "nginx-bogus"`},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: warp}]", `unknown kind "warp"`},
		{"name: t\nprofiles: [nginx-stock]\nkeys: [dsa]\nscenarios: [{kind: keepalive-1k}]", `unknown key type "dsa"`},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: handshake, keys: [p256, ed25519]}]", `unknown key type "ed25519"`},
		{"name: t\nprofiles: [nginx-stock]\nsearch: {step: -1s}\nscenarios: [{kind: keepalive-1k}]", "step must be > 0"},
		{"name: t\nprofiles: [nginx-stock]\nsearch: {step: 5s, discard: 5s}\nscenarios: [{kind: keepalive-1k}]", "discard must be"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: fixed-rate, rates: [-5]}]", "rates: -5 is not a rate"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: fixed-rate, rates: [.nan]}]", "is not a rate"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: sustained, duration: -3s}]", "duration must be > 0"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: sustained, connections: -1}]", "connections must be"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k, search: {start: -10}}]", "start must be > 0"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k, search: {warp: 9}}]", "warp"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k, pass: {max_errors: 2}}]", "max_errors must be a fraction"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k}, {kind: keepalive-1k}]", "used twice"},
		{"name: t\nprofiles: [nginx-stock]\nnet: bridge\nscenarios: [{kind: keepalive-1k}]", `net "bridge"`},
		{"name: t\nprofiles: [nginx-stock]\ncpus: {server: x-y}\nscenarios: [{kind: keepalive-1k}]", "cpus.server"},
		{"name: t\nprofiles: [nginx-stock]\nmemory_limit: -2GiB\nscenarios: [{kind: keepalive-1k}]", "memory size"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k, rates: [100]}]", "rates only apply"},
		{"name: t\nprofiles: [nginx-stock, nginx-stock]\nscenarios: [{kind: keepalive-1k}]", "listed twice"},
		{"name: t\nprofiles: []\nscenarios: [{kind: keepalive-1k}]", "profiles is empty"},
		{"name: t\nprofiles: [nginx-stock]\nscenarios: []", "scenarios is empty"},
		{"name: t\nprofiles: [nginx-stock]\nscnarios: []", "scnarios"},
		{"profiles: [nginx-stock]\nscenarios: [{kind: keepalive-1k}]", "name is empty"},
		{"name: t\nprofiles: [nginx-stock]\nsearch: {growth: 1}\nscenarios: [{kind: keepalive-1k}]", "growth must be between 1.05"},
		{"name: t\nprofiles: [nginx-stock]\nsearch: {precision: 1.5}\nscenarios: [{kind: keepalive-1k}]", "precision must be"},
		{"name: t\nprofiles: [nginx-stock]\nsearch: {step: soon}\nscenarios: [{kind: keepalive-1k}]", "bad duration"},
		{"", "plan is empty"},
		{"name: a\n---\nname: b", "more than one YAML document"},
	} {
		p, err := Parse([]byte(tc.yaml))
		if err == nil {
			err = p.Check()
		}
		if err == nil {
			t.Errorf("%q: accepted", tc.yaml)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q lacks %q", tc.yaml, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error is not one line: %q", tc.yaml, err)
		}
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load("/nonexistent/plan.yaml")
	if err == nil || !strings.Contains(err.Error(), "quick") {
		t.Fatalf("error %v should list the built-ins", err)
	}
}

func TestNarrow(t *testing.T) {
	p, _ := Load("quick")
	if err := p.Narrow(Selection{Profiles: []string{"nginx-keepalive", "nginx-stock"}, Scenarios: []string{"handshake", "keepalive-1k"}}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.Profiles, ",") != "nginx-stock,nginx-keepalive" || strings.Join(p.ScenarioNames(), ",") != "keepalive-1k,handshake,handshake-rsa4096" {
		t.Fatalf("narrowed to %v %v", p.Profiles, p.ScenarioNames())
	}
	for _, sel := range []Selection{
		{Profiles: []string{"h2o"}},
		{Scenarios: []string{"file-1m"}},
		{Keys: []string{"rsa2048"}},
	} {
		q, _ := Load("quick")
		if err := q.Narrow(sel); err == nil || !strings.Contains(err.Error(), "not") {
			t.Errorf("%+v: error %v", sel, err)
		}
	}
	s, _ := Load("seed-2026")
	if err := s.Narrow(Selection{Keys: []string{"rsa2048"}}); err != nil {
		t.Fatal(err)
	}
	for _, sc := range s.Scenarios {
		if sc.Kind != KindHandshake {
			t.Fatalf("scenario %s kept without its key", sc.Name)
		}
		if strings.Join(sc.Keys, ",") != "rsa2048" {
			t.Fatalf("keys %v", sc.Keys)
		}
	}
	if len(s.Notes) == 0 {
		t.Fatal("dropped scenarios need a note")
	}
}

func TestScale(t *testing.T) {
	p, _ := Load("seed-2026")
	if err := p.Scale(0.1); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	e := p.Scenarios[0].Eff.Search
	if e.Step.D() != 3*time.Second || e.Discard.D() != 600*time.Millisecond || e.ConfirmStep.D() != 7500*time.Millisecond || e.CooldownCap.D() != 10*time.Second {
		t.Fatalf("scaled search %+v", e)
	}
	if p.Timeout.D() != 10*time.Second {
		t.Fatalf("timeout must not scale: %v", p.Timeout)
	}
	if d := p.Scenarios[len(p.Scenarios)-1].Duration.D(); d != 12*time.Second {
		t.Fatalf("fixed-rate duration %v", d)
	}
	q, _ := Load("quick")
	if err := q.Scale(1e-12); err != nil {
		t.Fatal(err)
	}
	if err := q.Check(); err == nil || !strings.Contains(err.Error(), "> 0") {
		t.Fatalf("durations scaled to nothing accepted: %v", err)
	}
	for _, f := range []float64{0, -1, 1000} {
		if err := q.Scale(f); err == nil {
			t.Errorf("scale %g accepted", f)
		}
	}
}

func TestEstimate(t *testing.T) {
	p, _ := Load("quick")
	ka := p.Scenarios[0].Estimate()
	// round 1: probes 4000..128000 (6), bisect to 15% (3), 1
	// confirmation; rounds 2 and 3 from round 1's bracket: its pass and
	// its failure probed, a bisection step, 1 confirmation
	if p.Rounds != 3 || ka.Steps != 10+2*4 {
		t.Fatalf("keepalive steps %d in %d rounds", ka.Steps, p.Rounds)
	}
	probe := 2 * time.Second
	first := 9*probe + 2*time.Second + 2*5*time.Second
	later := 3*probe + 2*time.Second + 5*time.Second
	if want := first + 2*later; ka.Time != want || ka.Cooldowns != 2*5*time.Second+2*5*time.Second {
		t.Fatalf("keepalive time %v (cool-downs %v), want %v", ka.Time, ka.Cooldowns, want)
	}
	var fixed Estimate
	for _, s := range p.Scenarios {
		if s.Name == KindFixedRate {
			fixed = s.Estimate()
		}
	}
	if fixed.Steps != 2 || fixed.Time != 2*3*time.Second { // rounds: 2
		t.Fatalf("fixed %+v", fixed)
	}
	s := Search{Start: 100, Max: 1000, Growth: 2, Precision: 0.08}
	if n := s.probeSteps(); n != 5 { // 100 200 400 800 1000
		t.Fatalf("probes %d", n)
	}
	if n := s.bisectSteps(); n != 4 {
		t.Fatalf("bisect %d", n)
	}
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]int64{"2GiB": 2 << 30, "512MiB": 512 << 20, "0": 0, "1G": 1 << 30, "1.5KiB": 1536, "100": 100} {
		var b ByteSize
		if err := b.UnmarshalText([]byte(in)); err != nil || int64(b) != want {
			t.Errorf("%s: %d %v", in, b, err)
		}
	}
	for _, in := range []string{"-1", "lots", "NaNGiB", "1e30GiB"} {
		var b ByteSize
		if err := b.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("%s accepted", in)
		}
	}
	if out, _ := ByteSize(2 << 30).MarshalText(); string(out) != "2GiB" {
		t.Errorf("marshal %s", out)
	}
	var d Duration
	if err := d.UnmarshalText([]byte("1m30s")); err != nil || d.D() != 90*time.Second {
		t.Errorf("duration %v %v", d, err)
	}
}

// An explicit 0 in the plan's or a scenario's search and pass blocks is 0,
// not "unset": max_errors 0 (no error allowed), max_step_downs 0,
// cooldown_margin 0 and discard 0s stay 0, while fields left out take
// the defaults.
func TestExplicitZeroIsZero(t *testing.T) {
	p, err := Parse([]byte(`
name: zeros
profiles: [nginx-stock]
search: {discard: 0s, max_step_downs: 0, cooldown_margin: 0}
pass: {max_errors: 0}
scenarios:
  - kind: keepalive-1k
  - kind: handshake
    name: hs
    search: {cooldown_cap: 0s, step_down: 0.5}
    pass: {max_errors: 0.05}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	d := DefaultSearch()
	for _, s := range p.Scenarios {
		e := s.Eff.Search
		if e.Discard != 0 || e.MaxStepDowns != 0 || e.CooldownMargin != 0 {
			t.Errorf("%s: discard %v, max_step_downs %d, cooldown_margin %d; want the explicit zeros", s.Name, e.Discard, e.MaxStepDowns, e.CooldownMargin)
		}
		if e.Start != d.Start || e.Step != d.Step || e.ConfirmRuns != d.ConfirmRuns {
			t.Errorf("%s: fields left out lost their defaults: %+v", s.Name, e)
		}
	}
	ka, hs := p.Scenarios[0].Eff, p.Scenarios[1].Eff
	if ka.Pass.MaxErrors != 0 || ka.Pass.P95 != DefaultPass().P95 {
		t.Errorf("keepalive pass %+v: want max_errors 0 and the default p95", ka.Pass)
	}
	if ka.Search.CooldownCap != d.CooldownCap || hs.Search.CooldownCap != 0 || hs.Search.StepDown != 0.5 || hs.Pass.MaxErrors != 0.05 {
		t.Errorf("scenario overrides: keepalive cap %v, hs cap %v step_down %g max_errors %g", ka.Search.CooldownCap, hs.Search.CooldownCap, hs.Search.StepDown, hs.Pass.MaxErrors)
	}
	// The marshalled plan (plan show FILE, results.json) keeps the zeros.
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Check(); err != nil {
		t.Fatal(err)
	}
	for i := range p.Scenarios {
		if q.Scenarios[i].Eff != p.Scenarios[i].Eff {
			t.Errorf("%s: round trip changed %+v into %+v", p.Scenarios[i].Name, p.Scenarios[i].Eff, q.Scenarios[i].Eff)
		}
	}
}

// A scenario's profiles list picks some of the plan's profiles; names
// outside the plan are errors; --profiles narrows the lists and drops a
// scenario left with none.
func TestScenarioProfiles(t *testing.T) {
	text := `
name: p
profiles: [nginx-stock, nginx-keepalive, caddy-stock]
scenarios:
  - kind: keepalive-1k
  - kind: sustained
    profiles: [nginx-stock, caddy-stock]
`
	p, err := Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	ka, su := &p.Scenarios[0], &p.Scenarios[1]
	if !p.RunsOn(ka, "nginx-keepalive") || p.RunsOn(su, "nginx-keepalive") || !p.RunsOn(su, "caddy-stock") {
		t.Errorf("RunsOn: keepalive-1k on nginx-keepalive %v, sustained on nginx-keepalive %v, on caddy-stock %v", p.RunsOn(ka, "nginx-keepalive"), p.RunsOn(su, "nginx-keepalive"), p.RunsOn(su, "caddy-stock"))
	}
	if err := p.Narrow(Selection{Profiles: []string{"nginx-keepalive"}}); err != nil {
		t.Fatal(err)
	}
	if len(p.Scenarios) != 1 || p.Scenarios[0].Name != "keepalive-1k" || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "sustained dropped") {
		t.Errorf("after --profiles nginx-keepalive: scenarios %v, notes %v", p.ScenarioNames(), p.Notes)
	}
	bad, err := Parse([]byte(strings.Replace(text, "[nginx-stock, caddy-stock]", "[haproxy]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "profile haproxy is not in the plan's profiles") {
		t.Errorf("a scenario profile outside the plan: %v", err)
	}
}

// The pacing tolerance: 1 ms for searches, 0 for fixed-rate runs, and what a
// scenario says, 0 included.
func TestPacingToleranceDefaults(t *testing.T) {
	p, err := Parse([]byte(`
name: pacing
profiles: [nginx-stock]
scenarios:
  - kind: keepalive-1k
  - kind: keepalive-1k
    name: exact-search
    pacing_tolerance: 0s
  - kind: fixed-rate
  - kind: fixed-rate
    name: batched-fixed
    pacing_tolerance: 500us
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	want := []Duration{SearchPacingTolerance, 0, FixedPacingTolerance, Duration(500 * time.Microsecond)}
	for i, s := range p.Scenarios {
		if s.Eff.PacingTolerance != want[i] {
			t.Errorf("%s: pacing tolerance %v, want %v", s.Name, s.Eff.PacingTolerance, want[i])
		}
	}
	bad, err := Parse([]byte("name: x\nprofiles: [nginx-stock]\nscenarios:\n  - kind: keepalive-1k\n    pacing_tolerance: 2s\n"))
	if err == nil {
		err = bad.Check()
	}
	if err == nil || !strings.Contains(err.Error(), "pacing_tolerance") {
		t.Errorf("a 2 s tolerance: %v, want a pacing_tolerance error", err)
	}
}

// quick searches the keep-alive rate over HTTP/3 on the profiles that
// serve it, as keepalive-1k does over HTTP/1.1 on the same profile: the
// same body over HTTPS through the proxy, in two of its rounds or more,
// with its search steps (its max above any generator ceiling, so the
// ceiling search finds the generator's limit), on the plan's 1-CPU
// server layout, so the report's Protocols table sets the two side by
// side.
func TestQuickHasTheH3Search(t *testing.T) {
	p, err := Load("quick")
	if err != nil {
		t.Fatal(err)
	}
	var h1, h3 *Scenario
	for i := range p.Scenarios {
		switch s := &p.Scenarios[i]; s.Kind {
		case KindH3:
			if h3 != nil {
				t.Fatalf("two h3 scenarios: %s and %s", h3.Name, s.Name)
			}
			h3 = s
		case KindKeepalive:
			if h1 == nil {
				h1 = s
			}
		}
	}
	if h3 == nil {
		t.Fatal("quick has no h3 scenario")
	}
	if len(h3.Profiles) == 0 {
		t.Fatalf("%s runs on every profile: name the ones that serve HTTP/3", h3.Name)
	}
	for _, name := range h3.Profiles {
		prof, err := proxy.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		if !prof.Features.H3 {
			t.Errorf("%s: %s serves no HTTP/3", h3.Name, name)
		}
		if !slices.Contains(p.Profiles, name) || !p.RunsOn(h1, name) {
			t.Errorf("%s: %s has no HTTP/1.1 row in quick (%s) to compare with", h3.Name, name, h1.Name)
		}
	}
	if h3.Method != MethodSearch || h3.Path != h1.Path || h3.Scheme != SchemeHTTPS || h3.IsOrigin() || len(h3.Sysctls) > 0 || h3.ServerCPUs != h1.ServerCPUs {
		t.Errorf("%s is not %s over HTTP/3: %+v", h3.Name, h1.Name, h3)
	}
	// two rounds at least, inside keepalive-1k's: the Protocols table's
	// same-round ratio needs two rounds both ran
	if h3.Eff.Rounds < 2 || h3.Eff.Rounds > h1.Eff.Rounds || h3.Eff.Search.Step != h1.Eff.Search.Step || h3.Eff.Search.Precision != h1.Eff.Search.Precision {
		t.Errorf("%s searches unlike %s: rounds %d vs %d, %+v vs %+v", h3.Name, h1.Name, h3.Eff.Rounds, h1.Eff.Rounds, h3.Eff.Search, h1.Eff.Search)
	}
	if h3.Eff.Search.Max < h1.Eff.Search.Max {
		t.Errorf("%s's max %g is below %s's %g: it would stop the generator's HTTP/3 ceiling search before the generator's limit once that is higher", h3.Name, h3.Eff.Search.Max, h1.Name, h1.Eff.Search.Max)
	}
}
