package pin

import (
	"strings"
	"testing"
)

// hasNote reports whether some note contains every fragment.
func hasNote(notes []string, frags ...string) bool {
	for _, n := range notes {
		ok := true
		for _, f := range frags {
			ok = ok && strings.Contains(n, f)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestMakePlanDefaults(t *testing.T) {
	cases := []struct {
		name                     string
		cores, smt               int
		allowed                  string // "" = all online
		server, loadgen, backend string
		notes                    [][]string
		noNote                   []string
	}{
		{name: "1 CPU", cores: 1, smt: 1, server: "0", loadgen: "0", backend: "0",
			notes: [][]string{{"server, loadgen and backend all share CPU 0"}}},
		{name: "2 CPUs", cores: 2, smt: 1, server: "0", loadgen: "1", backend: "1",
			notes:  [][]string{{"backend shares CPU 1 with loadgen"}, {"server has CPU 0 to itself"}},
			noNote: []string{"hyperthread"}},
		{name: "1 core with SMT", cores: 1, smt: 2, server: "0", loadgen: "1", backend: "1",
			notes: [][]string{{"backend shares CPU 1 with loadgen"}, {"server and loadgen", "hyperthread siblings", "0/1"}, {"not enough cores", "siblings idle"}}},
		{name: "2 cores with SMT", cores: 2, smt: 2, server: "0", loadgen: "1", backend: "3",
			notes: [][]string{{"siblings of the server kept idle: CPU 2"}, {"loadgen and backend", "1/3"}, {"server has CPU 0 to itself"}}},
		{name: "4 cores", cores: 4, smt: 1, server: "0", loadgen: "1-2", backend: "3",
			noNote: []string{"share", "idle"}},
		{name: "8 cores", cores: 8, smt: 1, server: "0-1", loadgen: "2-5", backend: "6-7",
			notes: [][]string{{"server has CPUs 0-1 to itself"}}, noNote: []string{"share", "idle"}},
		{name: "8 cores with SMT", cores: 8, smt: 2, server: "0-1", loadgen: "2-5,10-13", backend: "6-7,14-15",
			notes: [][]string{{"siblings of the server kept idle: CPUs 8-9"}}, noNote: []string{"share", "compete"}},
		{name: "8 cores with SMT, 4 allowed", cores: 8, smt: 2, allowed: "0-3", server: "0", loadgen: "1-2", backend: "3",
			notes: [][]string{{"CPUs 4-15 are online but outside"}}},
		{name: "8 cores with SMT, siblings allowed", cores: 8, smt: 2, allowed: "0,8,1,9", server: "0", loadgen: "1", backend: "9",
			notes: [][]string{{"kept idle: CPU 8"}, {"loadgen and backend", "1/9"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo := fakeTopo(t, c.cores, c.smt)
			allowed := topo.Online()
			if c.allowed != "" {
				allowed = mustList(t, c.allowed)
			}
			p, err := MakePlan(topo, allowed, PlanRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Server.String() != c.server || p.Gen.String() != c.loadgen || p.Backend.String() != c.backend {
				t.Fatalf("plan server %s loadgen %s backend %s, want %s %s %s", p.Server, p.Gen, p.Backend, c.server, c.loadgen, c.backend)
			}
			for _, frags := range c.notes {
				if !hasNote(p.Notes, frags...) {
					t.Errorf("no note with %q in %q", frags, p.Notes)
				}
			}
			for _, f := range c.noNote {
				if hasNote(p.Notes, f) {
					t.Errorf("unexpected note with %q in %q", f, p.Notes)
				}
			}
			checkPlan(t, topo, allowed, p)
		})
	}
}

func TestMakePlanRequests(t *testing.T) {
	cases := []struct {
		name                     string
		cores, smt               int
		req                      PlanRequest
		server, loadgen, backend string
		note                     []string
	}{
		{name: "server takes both CPUs", cores: 2, smt: 1, req: PlanRequest{Server: 2},
			server: "0-1", loadgen: "0-1", backend: "0-1", note: []string{"all share CPUs 0-1"}},
		{name: "counts with SMT", cores: 8, smt: 2, req: PlanRequest{Server: 3, Gen: 5},
			server: "0-2", loadgen: "3-5,11-12", backend: "6-7,13-15", note: []string{"kept idle: CPUs 8-10"}},
		{name: "backend count", cores: 4, smt: 1, req: PlanRequest{Backend: 2},
			server: "0", loadgen: "1", backend: "2-3"},
		{name: "overlap when counts exceed the pool", cores: 8, smt: 1, req: PlanRequest{Gen: 6, Backend: 2},
			server: "0-1", loadgen: "2-7", backend: "6-7", note: []string{"backend shares CPUs 6-7 with loadgen"}},
		{name: "siblings used when counts need them", cores: 4, smt: 2, req: PlanRequest{Server: 1, Gen: 7},
			server: "0", loadgen: "1-7", backend: "1-7", note: []string{"server and loadgen", "0/4"}},
		{name: "fixed lists", cores: 8, smt: 2, req: PlanRequest{ServerCPUs: CPUSet{0, 1}, GenCPUs: CPUSet{2, 3, 4, 10, 11, 12}},
			server: "0-1", loadgen: "2-4,10-12", backend: "6-7,14-15", note: []string{"left idle: CPUs 5,13"}},
		{name: "fixed backend moves the server", cores: 8, smt: 2, req: PlanRequest{BackendCPUs: CPUSet{0}},
			server: "1-2", loadgen: "3-8,11-15", backend: "0"},
		{name: "fixed server on SMT siblings", cores: 2, smt: 2, req: PlanRequest{ServerCPUs: CPUSet{0, 2}},
			server: "0,2", loadgen: "1", backend: "3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			topo := fakeTopo(t, c.cores, c.smt)
			p, err := MakePlan(topo, topo.Online(), c.req)
			if err != nil {
				t.Fatal(err)
			}
			if p.Server.String() != c.server || p.Gen.String() != c.loadgen || p.Backend.String() != c.backend {
				t.Fatalf("plan server %s loadgen %s backend %s, want %s %s %s (notes %q)", p.Server, p.Gen, p.Backend, c.server, c.loadgen, c.backend, p.Notes)
			}
			if c.note != nil && !hasNote(p.Notes, c.note...) {
				t.Errorf("no note with %q in %q", c.note, p.Notes)
			}
			if c.req.Server > 0 && len(p.Server) != c.req.Server {
				t.Errorf("server got %d CPUs, asked %d", len(p.Server), c.req.Server)
			}
			checkPlan(t, topo, topo.Online(), p)
		})
	}
}

func TestMakePlanErrors(t *testing.T) {
	topo := fakeTopo(t, 2, 1)
	cases := []struct {
		name    string
		allowed CPUSet
		req     PlanRequest
		want    string
	}{
		{"negative", CPUSet{0, 1}, PlanRequest{Gen: -1}, "negative"},
		{"too many", CPUSet{0, 1}, PlanRequest{Server: 3}, "server wants 3 CPUs but only 2 are usable"},
		{"fixed outside", CPUSet{0, 1}, PlanRequest{GenCPUs: CPUSet{5}}, "cpu 5 is outside"},
		{"fixed outside allowed", CPUSet{0}, PlanRequest{ServerCPUs: CPUSet{1}}, "pick from 0"},
		{"nothing allowed", CPUSet{7}, PlanRequest{}, "none of the online CPUs (0-1)"},
		{"loadgen too big after server", CPUSet{0, 1}, PlanRequest{Server: 2, Gen: 1}, "loadgen wants 1 CPUs but only 0 are left"},
	}
	for _, c := range cases {
		_, err := MakePlan(topo, c.allowed, c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := MakePlan(nil, CPUSet{0}, PlanRequest{}); err == nil {
		t.Error("nil topology accepted")
	}
}

// TestMakePlanInvariants runs many requests over several machines and checks
// rules that must hold for every plan.
func TestMakePlanInvariants(t *testing.T) {
	for _, m := range []struct{ cores, smt int }{{1, 1}, {2, 1}, {1, 2}, {2, 2}, {3, 1}, {4, 2}, {8, 1}, {8, 2}} {
		topo := fakeTopo(t, m.cores, m.smt)
		n := len(topo.CPUs)
		for s := 0; s <= n; s++ {
			for l := 0; l <= n; l++ {
				for b := 0; b <= n; b++ {
					req := PlanRequest{Server: s, Gen: l, Backend: b}
					p, err := MakePlan(topo, topo.Online(), req)
					if err != nil {
						if !strings.Contains(err.Error(), "wants") {
							t.Errorf("%dx%d %+v: unexpected error %v", m.cores, m.smt, req, err)
						}
						continue
					}
					if s > 0 && len(p.Server) != s || l > 0 && len(p.Gen) != l && !p.Gen.Equal(p.Server) || b > 0 && len(p.Backend) != b && !p.Backend.Equal(p.Gen) {
						t.Errorf("%dx%d %+v: counts not honoured: %+v", m.cores, m.smt, req, p)
					}
					checkPlan(t, topo, topo.Online(), p)
				}
			}
		}
	}
}

// checkPlan asserts rules every plan obeys: groups are non-empty, inside the
// allowed set, and every shared CPU or server sibling is told in a note.
func checkPlan(t *testing.T, topo *Topology, allowed CPUSet, p Plan) {
	t.Helper()
	usable := topo.Online().Intersect(allowed)
	for _, g := range []group{{"server", p.Server}, {"loadgen", p.Gen}, {"backend", p.Backend}} {
		if len(g.cpus) == 0 || !g.cpus.IsSubsetOf(usable) {
			t.Fatalf("%s CPUs %s empty or outside usable %s", g.name, g.cpus, usable)
		}
	}
	allShare := p.Server.Equal(p.Gen) && p.Server.Equal(p.Backend)
	if len(p.Server.Intersect(p.Gen.Union(p.Backend))) > 0 && !allShare && !hasNote(p.Notes, "with server") {
		t.Errorf("server shares CPUs but no note says so: %+v", p)
	}
	if len(p.Gen.Intersect(p.Backend)) > 0 && !allShare && !hasNote(p.Notes, "shares", "with loadgen") && !hasNote(p.Notes, "loadgen shares") {
		t.Errorf("loadgen and backend share CPUs but no note says so: %+v", p)
	}
	if len(siblingPairs(topo, p.Server, p.Gen.Union(p.Backend))) > 0 && !hasNote(p.Notes, "server and", "hyperthread siblings") {
		t.Errorf("server has a busy sibling but no note says so: %+v", p)
	}
	if len(p.Notes) == 0 {
		t.Errorf("plan without notes: %+v", p)
	}
}

// mustList parses a CPU list or fails the test.
func mustList(t *testing.T, s string) CPUSet {
	t.Helper()
	v, err := ParseList(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
