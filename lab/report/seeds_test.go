package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

// seedsPlan is synthPlan with the seeds its scenarios cover.
const seedsPlan = synthPlan + `
seeds:
  - finding: cliff
    seed: "003"
    says: "the first 28,231 requests worked and everything after that failed."
    number: "28,231 then 502"
    value: 28231
    scenarios: [sustained]
    profiles: [nginx-stock]
  - finding: pool-leak
    seed: "003"
    says: "its TIME_WAIT sockets filled the port range"
    number: "TIME_WAIT filled the range"
    scenarios: [sustained]
    profiles: [caddy-stock]
  - finding: key-factor
    seed: "002"
    says: "skew the comparison by up to a factor of 10."
    number: "up to 10x by key type"
    value: 10
    scenarios: [handshake]
    profiles: [nginx-stock]
    keys: [p256, rsa4096]
  - finding: idle-memory
    seed: "001"
    says: "Caddy 2.11.7 held 10.9 MiB"
    number: "10.9 MiB idle"
    value: 10.9
    scenarios: [keepalive-1k]
    profiles: [caddy-stock]
`

// seedRow returns the seeds table's row of finding.
func seedRow(t *testing.T, r *Report, finding string) []string {
	t.Helper()
	if r.Seeds == nil {
		t.Fatal("no seeds table")
	}
	for _, row := range r.Seeds.Rows {
		if row[1] == finding {
			return row
		}
	}
	t.Fatalf("no row %s in %v", finding, r.Seeds.Rows)
	return nil
}

// The seeds table sets each cited number beside this run's, says whether
// the run reproduced it, and by how much the size differs.
func TestSeedsTable(t *testing.T) {
	full := fullFile(t)
	f := synthFileOf(t, seedsPlan)
	f.Units = full.Units
	r, md := build(t, f)
	if !strings.Contains(md, "## Seeds beside this machine") || strings.Index(md, "## Seeds beside") > strings.Index(md, "## Findings") {
		t.Errorf("the seeds table must open the report:\n%s", md)
	}
	for _, c := range []struct {
		finding, run, reproduced, size string
	}{
		{"cliff", "28,231 then 502 (t=7 s), 28,232-port range", "yes", "1.00x the seed's"},
		{"pool-leak", "caddy-stock: TIME_WAIT up to 27,000 (96% of the range), 0.33 new backend connections per request", "yes", "96% of the range against the seed's 100%"},
		{"key-factor", "10.0x (nginx-stock: 4,100 vs 410 new TLS connections/s)", "yes", "1.00x the seed's"},
		{"idle-memory", "caddy-stock: 11.0 MiB idle (anon+kernel 10.0 MiB)", "yes", "1.01x the seed's"},
	} {
		row := seedRow(t, r, c.finding)
		if row[3] != c.run || row[4] != c.reproduced || row[5] != c.size {
			t.Errorf("%s: row %q, want this run %q, reproduced %q, size %q", c.finding, row, c.run, c.reproduced, c.size)
		}
	}
	if !strings.Contains(md, `Seed 003, cliff: "the first 28,231 requests worked`) {
		t.Errorf("the seed's sentence must be cited:\n%s", md)
	}

	// The same plan against a run without the cliff or the leak, with a
	// small key factor and a large idle memory: every row says no.
	f = synthFileOf(t, seedsPlan)
	f.Units = append(f.Units,
		sustainedUnit("nginx-stock", spec{ok: 20000 * 90, secs: flat(90, 20000), tw: rising(90, 300), conns: 20000 * 90, reqs: 20000 * 90}),
		searchUnit("handshake", "nginx-stock", "p256", "1cpu", 900),
		searchUnit("handshake", "nginx-stock", "rsa4096", "1cpu", 600),
	)
	f.Proxies[2].IdleMemory = 80 << 20
	r, _ = build(t, f)
	for finding, want := range map[string]string{"cliff": "no", "key-factor": "no", "idle-memory": "no", "pool-leak": "not measured"} {
		if row := seedRow(t, r, finding); row[4] != want {
			t.Errorf("%s: %q, want reproduced %s", finding, row, want)
		}
	}
	if row := seedRow(t, r, "cliff"); row[3] != "nginx-stock: no failure in 90 s (75,000 2xx/s)" {
		t.Errorf("cliff without failures: %q", row[3])
	}
}

// Every seed a built-in plan cites names a measurement this version has.
func TestBuiltinSeedsHaveMeasures(t *testing.T) {
	n := 0
	for _, name := range plan.BuiltinNames() {
		p, err := plan.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Seeds {
			n++
			if _, ok := seedMeasures[s.Finding]; !ok {
				t.Errorf("plan %s cites seed %s finding %q: no such measurement (have %s)", name, s.Seed, s.Finding, seedNames())
			}
		}
	}
	if n == 0 {
		t.Error("no built-in plan cites a seed")
	}
}

// A cliff run with a narrowed port range (the scenario's
// ip_local_port_range) reproduces the seed's "the range less one": its
// size is the share of its own range, not the count against 28,231.
func TestCliffSeedNarrowedRange(t *testing.T) {
	f := synthFileOf(t, seedsPlan)
	secs := []result.Second{{T: 0, OK: 1999, Non2xx: 3000}, {T: 1, Non2xx: 9000}, {T: 2, Non2xx: 9000}}
	u := sustainedUnit("nginx-stock", spec{ok: 1999, bad: 21000, secs: secs, status502: 21000})
	u.Steps[0].Sysctls = map[string]string{"net.ipv4.ip_local_port_range": "32768\t34767"}
	f.Units = []*results.Unit{u}
	r, _ := build(t, f)
	row := seedRow(t, r, "cliff")
	if !strings.HasPrefix(row[3], "1,999 then 502 (t=0 s), 2,000-port range (the scenario's ip_local_port_range; the machine's has 28,232)") || row[4] != "yes" || row[5] != "1.00x the range less one, as the seed's 28,231 of its range" {
		t.Fatalf("row %q", row)
	}
}
