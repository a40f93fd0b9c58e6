package scenario

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/pin"
)

func topology(n int) (*pin.Topology, pin.CPUSet) {
	t := &pin.Topology{}
	var all []int
	for i := range n {
		t.CPUs = append(t.CPUs, pin.CPU{ID: i, Core: i, Siblings: pin.NewCPUSet(i)})
		all = append(all, i)
	}
	return t, pin.NewCPUSet(all...)
}

const testPlanYAML = `
name: test
profiles: [nginx-stock, nginx-keepalive]
keys: [p256]
cpus: {server: "1"}
idle_memory: {quiet: 1ms, samples: 3, every: 1ms}
search:
  start: 1000
  max: 64000
  precision: 0.08
  step: 2s
  discard: 1s
  confirm_runs: 3
  confirm_step: 3s
  cooldown_cap: 1s
  cooldown_margin: 10
scenarios:
  - kind: keepalive-1k
  - kind: fixed-rate
    rates: [500, 5000]
    runs: 2
    duration: 2s
  - kind: sustained
    duration: 3s
`

type harness struct {
	t      *testing.T
	dir    string
	plan   *plan.Plan
	lab    *fakeLab
	log    strings.Builder
	finder Finder
	cpus   int
}

func newHarness(t *testing.T, yaml string) *harness {
	h := &harness{t: t, dir: t.TempDir(), lab: newFakeLab(), finder: notFound(), cpus: 2}
	h.plan = h.loadPlan(yaml)
	h.lab.capacity["nginx-stock"] = 3000
	h.lab.capacity["nginx-keepalive"] = 20000
	return h
}

func (h *harness) loadPlan(yaml string) *plan.Plan {
	p, err := plan.Parse([]byte(yaml))
	if err != nil {
		h.t.Fatal(err)
	}
	if err := p.Check(); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// run runs the plan into h.dir with a fresh store, as a new process would.
func (h *harness) run(ctx context.Context) (*results.File, error) {
	h.t.Helper()
	return h.runWith(ctx, nil, nil)
}

// runWith is run with the runner's clock and sleep (nil: the real ones).
func (h *harness) runWith(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error) (*results.File, error) {
	h.t.Helper()
	topo, allowed := topology(h.cpus)
	lay, err := PlanLayouts(h.plan, topo, allowed)
	if err != nil {
		h.t.Fatal(err)
	}
	units, err := BuildUnits(h.plan, lay, h.finder)
	if err != nil {
		h.t.Fatal(err)
	}
	store, _, err := results.Open(h.dir, h.plan, results.RunOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	defer store.Close()
	r := &Runner{Plan: h.plan, Store: store, Layouts: lay, Units: units, Budget: MakeBudget(h.plan, units),
		Open: h.lab.open, Gen: h.lab.gen, Log: &h.log, Poll: time.Millisecond, Machine: results.Machine{Hostname: "test"}, Now: now, Sleep: sleep}
	err = r.Run(ctx)
	f, lerr := results.Load(h.dir)
	if lerr != nil {
		h.t.Fatal(lerr)
	}
	return f, err
}

func TestRunWholePlan(t *testing.T) {
	h := newHarness(t, testPlanYAML)
	h.lab.connsPer = 1
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if !f.Finished || len(f.Units) != 6 {
		t.Fatalf("finished %v, %d units", f.Finished, len(f.Units))
	}
	for _, u := range f.Units {
		if u.Status != results.StatusDone {
			t.Fatalf("unit %s: %s %s", u.ID, u.Status, u.Reason)
		}
		if u.ErrorLog == nil || u.ErrorLog.Causes["addr_not_avail"] != 1 {
			t.Fatalf("unit %s: error log not recorded", u.ID)
		}
	}
	ka := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	if ka.Search == nil || ka.Search.Rate > 3000 || ka.Search.Rate < 3000/1.08 || !ka.Search.Confirmed {
		t.Fatalf("search result %+v", ka.Search)
	}
	// every step is recorded with its generator result, spectrum and proxy samples
	for _, st := range ka.Steps {
		if st.Result == nil || len(st.Spectrum) == 0 || st.Verdict == "" || !st.Backend.Valid {
			t.Fatalf("step %d incomplete: %+v", st.Seq, st)
		}
		if st.Verdict != "pass" && st.CooldownS == 0 && st.CooldownTW[0] != 1000 {
			t.Fatalf("failed step %d without a cool-down record: %+v", st.Seq, st)
		}
		if st.Verdict == "pass" && st.CooldownTW != [2]int{} {
			t.Fatalf("passed step %d cooled down", st.Seq)
		}
	}
	if st := ka.Steps[len(ka.Steps)-1]; st.Phase != "confirm" || st.Confirm != 3 {
		t.Fatalf("last step %+v", st)
	}
	// the cool-down drained TIME_WAIT to the margin: 1000 -> 600 -> 200 -> 0
	var cooled bool
	for _, st := range ka.Steps {
		if st.Verdict == "fail" {
			cooled = true
			if st.CooldownTW != [2]int{1000, 0} {
				t.Fatalf("cool-down TIME_WAIT %v", st.CooldownTW)
			}
		}
	}
	if !cooled {
		t.Fatal("no failed step")
	}
	fixed := f.Unit("fixed-rate/nginx-stock/p256/1cpu")
	if len(fixed.Steps) != 4 || fixed.Steps[0].Rate != 500 || fixed.Steps[2].Rate != 5000 || fixed.Steps[3].Run != 2 {
		t.Fatalf("fixed steps %+v", fixed.Steps)
	}
	if fixed.Steps[0].Verdict != "pass" || fixed.Steps[2].Verdict != "fail" {
		t.Fatalf("fixed verdicts %s %s", fixed.Steps[0].Verdict, fixed.Steps[2].Verdict)
	}
	if c := fixed.Steps[0].Backend.ConnsPerRequest(); c != 1 {
		t.Fatalf("backend connections per request %v", c)
	}
	// a fresh session and a proxy start per unit, all closed and stopped
	if len(h.lab.opens) != 6 || h.lab.closed != 6 || len(h.lab.started) != 6 || h.lab.serves != 1 || h.lab.stopped != 7 {
		t.Fatalf("opens %d closed %d started %d serves %d stopped %d", len(h.lab.opens), h.lab.closed, len(h.lab.started), h.lab.serves, h.lab.stopped)
	}
	if o := h.lab.opens[0]; o.CPUs == nil || !o.CPUs.Server.Equal(pin.NewCPUSet(0)) || len(o.Keys) != 1 {
		t.Fatalf("env options %+v", o)
	}
	// idle memory once per profile
	if len(f.Proxies) != 2 || f.Proxies[0].IdleMemory != 5<<20 || f.Proxies[0].Version == "" {
		t.Fatalf("proxies %+v", f.Proxies)
	}
	// generator settings: search steps are open loop with the discard as warmup
	c := h.lab.genConfig[0]
	if c.Rate != 1000 || c.Duration != 2*time.Second || c.Warmup != time.Second || c.Connections != 200 || c.NewConn {
		t.Fatalf("first gen config %+v", c)
	}
	// pacing: searches batch their sends (1 ms), fixed-rate runs do not
	var fixedTol []time.Duration
	for _, g := range h.lab.genConfig {
		if g.Rate > 0 && g.PacingTolerance != time.Millisecond {
			fixedTol = append(fixedTol, g.PacingTolerance)
		}
	}
	for _, g := range h.lab.genConfig {
		if g.NewConn != g.TLS.Insecure {
			t.Fatalf("handshake steps (new-conn) skip verification, the others keep it: %+v", g)
		}
	}
	if c.PacingTolerance != time.Millisecond || len(fixedTol) == 0 || fixedTol[0] != 0 {
		t.Fatalf("pacing tolerance: search %v, others %v: want 1ms for searches and 0 for the fixed-rate runs", c.PacingTolerance, fixedTol)
	}
	for _, want := range []string{"[1/~", "ETA", "cool-down: TIME_WAIT 1000 -> 0", "idle memory of nginx-stock"} {
		if !strings.Contains(h.log.String(), want) {
			t.Fatalf("progress lacks %q:\n%s", want, h.log.String())
		}
	}
}

func TestInterruptAndResume(t *testing.T) {
	// the uninterrupted run, for comparison
	ref := newHarness(t, testPlanYAML)
	want, err := ref.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := ref.lab.genCalls
	// the generator ceiling's search runs first, before the first unit's
	if len(want.Ceilings) != 1 || want.Ceilings[0].Status != results.StatusDone {
		t.Fatalf("ceilings %+v", want.Ceilings)
	}
	ceil := len(want.Ceilings[0].Steps)

	h := newHarness(t, testPlanYAML)
	ctx, cancel := context.WithCancel(context.Background())
	h.lab.cancelAt, h.lab.cancel = ceil+7, cancel
	f, err := h.run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run returned %v", err)
	}
	u := f.Unit("keepalive-1k/nginx-stock/p256/1cpu")
	if u.Status != results.StatusInterrupted || len(u.Steps) != 7 || !u.Steps[6].Interrupted {
		t.Fatalf("after Ctrl-C: status %s, %d steps, last %+v", u.Status, len(u.Steps), u.Steps[len(u.Steps)-1])
	}
	if h.lab.closed != len(h.lab.opens) || h.lab.stopped != len(h.lab.started)+h.lab.serves {
		t.Fatalf("lab not cleaned up: closed %d, stopped %d of %d", h.lab.closed, h.lab.stopped, len(h.lab.started))
	}

	// the next run of the same plan resumes: the six finished steps are
	// replayed, the interrupted one runs again
	h.lab.cancelAt = 0
	calls := h.lab.genCalls
	f, err = h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rerun := h.lab.genCalls - calls; rerun != total-ceil-6 {
		t.Fatalf("resume ran %d steps, want %d (the ceiling and six steps were recorded)", rerun, total-ceil-6)
	}
	if !f.Finished {
		t.Fatal("not finished")
	}
	for _, wu := range want.Units {
		gu := f.Unit(wu.ID)
		if gu.Status != results.StatusDone || len(gu.Steps) != len(wu.Steps) {
			t.Fatalf("%s: %s with %d steps, want %d", wu.ID, gu.Status, len(gu.Steps), len(wu.Steps))
		}
		if (wu.Search == nil) != (gu.Search == nil) || wu.Search != nil && *wu.Search != *gu.Search {
			t.Fatalf("%s: search %+v, want %+v", wu.ID, gu.Search, wu.Search)
		}
	}
	if !strings.Contains(h.log.String(), "[recorded]") {
		t.Fatal("replayed steps not shown")
	}

	// a third run finds everything done and runs nothing
	calls = h.lab.genCalls
	if _, err := h.run(context.Background()); err != nil || h.lab.genCalls != calls {
		t.Fatalf("finished plan ran again: %v, %d calls", err, h.lab.genCalls-calls)
	}
}

func TestSkipsAndErrors(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [nginx-stock, nginx-keepalive, caddy-stock, haproxy]
cpus: {server: "1"}
search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - kind: h3
  - kind: sustained
    duration: 2s
`)
	h.finder = notFound("caddy-stock")
	h.lab.startErr["haproxy"] = errors.New("haproxy: config check failed")
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, u := range f.Units {
		status[u.ID] = u.Status + ": " + u.Reason
	}
	for id, want := range map[string]string{
		"h3/nginx-stock/p256/1cpu":        "skipped: nginx-stock serves no HTTP/3",
		"h3/caddy-stock/p256/1cpu":        "skipped: not installed",
		"sustained/caddy-stock/p256/1cpu": "skipped: not installed",
		"sustained/haproxy/p256/1cpu":     "error: start haproxy: haproxy: config check failed",
		"sustained/nginx-stock/p256/1cpu": "done: ",
	} {
		if !strings.HasPrefix(status[id], want) {
			t.Errorf("%s: %q, want %q", id, status[id], want)
		}
	}
	b := MakeBudget(h.plan, mustUnits(t, h))
	if strings.Join(b.Missing, ",") != "caddy-stock" || b.Units != 3 {
		t.Fatalf("budget %+v", b)
	}
}

func mustUnits(t *testing.T, h *harness) []UnitSpec {
	topo, allowed := topology(h.cpus)
	lay, err := PlanLayouts(h.plan, topo, allowed)
	if err != nil {
		t.Fatal(err)
	}
	units, err := BuildUnits(h.plan, lay, h.finder)
	if err != nil {
		t.Fatal(err)
	}
	return units
}

func TestGeneratorUsageErrorEndsRun(t *testing.T) {
	h := newHarness(t, testPlanYAML)
	h.lab.usageErr = true
	_, err := h.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err %v", err)
	}
	if h.lab.closed != 1 {
		t.Fatal("session not closed")
	}
}

const scalingYAML = `
name: scaling
profiles: [nginx-keepalive]
search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - name: ka
    kind: keepalive-1k
    server_cpus: "1"
  - name: ka@4cpu
    kind: keepalive-1k
    server_cpus: "4"
`

func TestScalingOnSmallAndLargeMachines(t *testing.T) {
	h := newHarness(t, scalingYAML)
	topo, allowed := topology(2)
	lay, err := PlanLayouts(h.plan, topo, allowed)
	if err != nil {
		t.Fatal(err)
	}
	if len(lay.Layouts) != 1 || lay.ByScenario["ka@4cpu"] != "" || !strings.Contains(lay.Skipped["ka@4cpu"], "same test as ka") {
		t.Fatalf("2 CPUs: %+v", lay)
	}
	if len(lay.Notes) != 1 || !strings.Contains(lay.Notes[0], "asks for 4 server CPUs; this machine has 2 usable") {
		t.Fatalf("notes %v", lay.Notes)
	}

	topo, allowed = topology(8)
	lay, err = PlanLayouts(h.plan, topo, allowed)
	if err != nil {
		t.Fatal(err)
	}
	if len(lay.Layouts) != 2 || lay.ByScenario["ka"] != "1cpu" || lay.ByScenario["ka@4cpu"] != "4cpu" || lay.Family["ka@4cpu"] != "ka" {
		t.Fatalf("8 CPUs: %+v", lay)
	}
	if l := lay.Layouts[1]; len(l.Server) != 4 || len(l.Server.Intersect(l.Gen)) != 0 {
		t.Fatalf("4-CPU layout %+v", l)
	}
	h.cpus = 8
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.lab.opens) != 2 || len(f.Units) != 2 || f.Units[1].Family != "ka" || f.Units[1].Layout != "4cpu" {
		t.Fatalf("opens %d units %+v", len(h.lab.opens), f.Units)
	}

	// an explicit CPU list that leaves nothing for the generator is refused
	bad := h.loadPlan(strings.Replace(scalingYAML, `server_cpus: "4"`, `server_cpus: "0-1"`, 1))
	topo, allowed = topology(2)
	if _, err := PlanLayouts(bad, topo, allowed); err == nil || !strings.Contains(err.Error(), "leave none") {
		t.Fatalf("err %v", err)
	}
}

func TestBudgetOfQuickPlan(t *testing.T) {
	p, lay := builtinLayouts(t, "quick")
	b := MakeBudget(p, mustUnitsAll(t, p, lay))
	// keepalive-1k on three proxies, handshake on three, handshake-rsa4096
	// on one, the cliff on one in the default range, its tw_reuse and
	// tw_buckets copies, the pool leak on three, fixed-rate on four,
	// cpu-cpuset and cpu-quota on two, keep-alive over HTTP/3 on
	// caddy-stock, seed 001's hosts on two (nginx-npm's on a 2,000-port
	// range is the cliff's there); a ceiling per search scenario and key
	if len(b.Profiles) != 6 || b.Units != 24 || b.Ceilings != 4 || len(b.Missing) != 0 {
		t.Fatalf("budget %+v", b)
	}
	// make lab: at most 15 minutes on 2 cores, installs (about 3.5
	// minutes on a fresh machine) included. The estimate is an upper
	// bound: it counts every probe up to the search's max (10m47s
	// estimated for the 11m43s make lab of issue 20, installs included).
	// In 3 rounds: 14m39s estimated for two make lab runs of 12m11s and
	// 11m46s without installs on a host with 0.5% and 3.5% median steal;
	// then shorter quota runs, handshake in 2 rounds: 11m52s for 13m34s
	// estimated; the cliff in a 2,000-port range beside a 40 s default:
	// 14m7s estimated. keepalive-1k-h3 (its ceiling and two rounds on
	// caddy-stock, about 60 s): 15m10s estimated for a make lab of 13m56s
	// (13m49s of lab time, installs already there) on a host where the
	// control moved -50% and +37% across rounds and 3 units were
	// measured again. Seed 001's hosts (about 53 s) for the cliff's own
	// 2,000-port scenario, 28 s of the default-range cliff and the idle
	// memory's second reading: 15m6s estimated for a make lab of 12m07s
	// (installs already there), and a fresh machine's builds of Caddy and
	// loadlab side by side took 5m34s more: keepalive-1k without
	// nginx-keepalive, handshake in one round and fixed-rate in two,
	// 13m7s estimated for a fresh make lab of 15m23s (10m41s of lab);
	// cpu-cpuset and cpu-quota in two rounds, sustained-pool's runs 4 s:
	// 12m23s estimated.
	if b.Time > 12*time.Minute+30*time.Second || b.Time < 5*time.Minute {
		t.Fatalf("quick plan budget %s", FormatDuration(b.Time))
	}
	t.Logf("quick: %s", b)
	units, err := BuildUnits(p, lay, notFound("caddy-stock", "caddy-pool128"))
	if err != nil {
		t.Fatal(err)
	}
	if nc := MakeBudget(p, units); nc.Units != 15 || strings.Join(nc.Missing, ",") != "caddy-stock,caddy-pool128" || nc.Time >= b.Time {
		t.Fatalf("without Caddy: %+v", nc)
	}
}

func mustUnitsAll(t *testing.T, p *plan.Plan, lay *Layouts) []UnitSpec {
	units, err := BuildUnits(p, lay, notFound())
	if err != nil {
		t.Fatal(err)
	}
	return units
}

// checkBesideH1 checks a run of keepalive-1k beside a scenario on another
// protocol (proto): every generator step is keepalive-1k's (HTTP/1.1, 200
// connections) or the other scenario's (isOther), both ran, and the
// ceilings' serve targets were HTTP/1.1 for keepalive-1k, then one that
// serves proto.
func checkBesideH1(t *testing.T, h *harness, proto string, isOther func(gen.Config) bool, serves func(proxy.Features) bool) {
	t.Helper()
	var h1, other int
	for _, c := range h.lab.genConfig {
		switch {
		case isOther(c):
			other++
		case !c.HTTP2 && !c.HTTP3 && c.Connections == 200:
			h1++
		default:
			t.Fatalf("gen config %+v: neither keepalive-1k's nor the %s scenario's", c, proto)
		}
	}
	if h1 == 0 || other == 0 {
		t.Fatalf("%d HTTP/1.1 and %d %s steps", h1, other, proto)
	}
	if sf := h.lab.serveFeatures; len(sf) != 2 || serves(sf[0]) || !serves(sf[1]) {
		t.Fatalf("ceilings' serve targets %+v: want HTTP/1.1 for keepalive-1k, then %s", sf, proto)
	}
}

// builtinLayouts loads the built-in plan name and lays it out on 2 CPUs.
func builtinLayouts(t *testing.T, name string) (*plan.Plan, *Layouts) {
	t.Helper()
	p, err := plan.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	topo, allowed := topology(2)
	lay, err := PlanLayouts(p, topo, allowed)
	if err != nil {
		t.Fatal(err)
	}
	return p, lay
}

// keepalive-1k-h2 runs the keepalive search over HTTP/2: every step of its
// units and of its generator ceiling asks the generator for HTTP/2, and
// the ceiling's loadlab serve speaks it; keepalive-1k beside it stays on
// HTTP/1.1.
func TestKeepaliveH2(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [nginx-stock, caddy-stock]
cpus: {server: "1"}
search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - kind: keepalive-1k
  - kind: keepalive-1k-h2
`)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	for _, id := range []string{"keepalive-1k-h2/nginx-stock/p256/1cpu", "keepalive-1k-h2/caddy-stock/p256/1cpu"} {
		if u := f.Unit(id); u == nil || u.Status != results.StatusDone || u.Kind != plan.KindKeepaliveH2 {
			t.Fatalf("%s: %+v", id, u)
		}
	}
	checkBesideH1(t, h, "HTTP/2", func(c gen.Config) bool { return c.HTTP2 && c.Connections == 20 && !c.HTTP3 && !c.NewConn },
		func(f proxy.Features) bool { return f.H2 })
}

// quick's HTTP/3 search runs on the Caddy profile it names, beside that
// profile's keepalive-1k, with its own generator ceiling (one more per
// key and layout); run on every profile of the plan it is skipped, with
// the reason, on each profile that serves no HTTP/3, and runs on each
// that does (caddy-pool128).
func TestQuickH3Units(t *testing.T) {
	p, lay := builtinLayouts(t, "quick")
	var h3 []UnitSpec
	for _, u := range mustUnitsAll(t, p, lay) {
		if u.Scenario.Kind == plan.KindH3 {
			h3 = append(h3, u)
		}
	}
	if len(h3) != 1 || h3[0].ID != "keepalive-1k-h3/caddy-stock/p256/1cpu" || h3[0].Skip != "" || !h3[0].Profile.Features.H3 {
		t.Fatalf("quick's h3 units %+v, want caddy-stock's on 1cpu, run", h3)
	}

	for i := range p.Scenarios {
		if p.Scenarios[i].Kind == plan.KindH3 {
			p.Scenarios[i].Profiles = nil // every profile of the plan
		}
	}
	got := map[string]string{}
	for _, u := range mustUnitsAll(t, p, lay) {
		if u.Scenario.Kind == plan.KindH3 {
			got[u.Profile.Name] = u.Skip
		}
	}
	for name, want := range map[string]string{
		"nginx-stock": "nginx-stock serves no HTTP/3", "nginx-keepalive": "nginx-keepalive serves no HTTP/3",
		"haproxy": "haproxy serves no HTTP/3", "caddy-stock": "", "caddy-pool128": "",
	} {
		if s, ok := got[name]; !ok || s != want {
			t.Errorf("h3 on %s: skip %q (unit there: %v), want %q", name, s, ok, want)
		}
	}
}

// An h3 scenario asks the generator for HTTP/3 in every step of its units
// and of its generator ceiling, and the ceiling's loadlab serve speaks
// HTTP/3 (serve --h3); keepalive-1k beside it stays on HTTP/1.1 against
// a serve without it.
func TestKeepaliveH3(t *testing.T) {
	h := newHarness(t, `
name: t
profiles: [caddy-stock]
cpus: {server: "1"}
search: {start: 1000, max: 4000, step: 2s, discard: 1s, confirm_runs: 1, confirm_step: 2s, cooldown_cap: 10ms}
scenarios:
  - kind: keepalive-1k
  - name: keepalive-1k-h3
    kind: h3
`)
	f, err := h.run(context.Background())
	if err != nil {
		t.Fatalf("%v\n%s", err, h.log.String())
	}
	if u := f.Unit("keepalive-1k-h3/caddy-stock/p256/1cpu"); u == nil || u.Status != results.StatusDone || u.Kind != plan.KindH3 || u.Ceiling != "ceiling/keepalive-1k-h3/p256/1cpu" {
		t.Fatalf("h3 unit %+v", u)
	}
	checkBesideH1(t, h, "HTTP/3", func(c gen.Config) bool { return c.HTTP3 && !c.HTTP2 && !c.NewConn && c.Connections == 50 },
		func(f proxy.Features) bool { return f.H3 })
}
