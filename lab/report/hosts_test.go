package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/session"
)

// hostsPlan is seed 001's method on three profiles, with its table cited.
const hostsPlan = `
name: seed-001-synth
profiles: [caddy-stock, haproxy, nginx-npm]
keys: [p256]
idle_memory: {quiet: 1s, samples: 3, every: 1s}
scenarios:
  - kind: hosts
  - name: hosts-spread
    kind: hosts
    spread: true
seeds:
  - finding: hosts-idle-memory
    seed: "001"
    says: "Caddy 2.11.7 held 10.9 MiB"
    number: "Caddy 10.9 MiB, NPM 83.9 MiB"
    scenarios: [hosts]
    profiles: [caddy-stock, nginx-npm]
    numbers: ["10.9 MiB", "83.9 MiB"]
    values: [10.9, 83.9]
  - finding: hosts-rate
    seed: "001"
    says: "the middle run did 5,324 requests per second"
    number: "Caddy 4,018, NPM 977"
    scenarios: [hosts]
    profiles: [caddy-stock, nginx-npm]
    numbers: ["4,018", "977"]
    values: [4018, 977]
  - finding: hosts-p99
    seed: "001"
    says: "99th percentile 37 ms"
    number: "Caddy 37 ms, NPM 176 ms"
    scenarios: [hosts]
    profiles: [caddy-stock, nginx-npm]
    numbers: ["37 ms", "176 ms"]
    values: [37, 176]
  - finding: hosts-502
    seed: "001"
    says: "1,224 of the responses in that run were 502"
    number: "NPM 1,224, 2,470, every response; Caddy none"
    scenarios: [hosts]
    profiles: [nginx-npm, caddy-stock]
  - finding: config-lines
    seed: "001"
    says: "Caddy is 15 lines."
    number: "Caddy 15, NPM 68 per host"
    scenarios: [hosts]
    profiles: [caddy-stock, haproxy, nginx-npm]
    numbers: ["15", "-", "340 (68 per host)"]
    values: [15, 40, 340]
  - finding: h3-build
    seed: "001"
    says: "Caddy's default for a server is h1 h2 h3."
    number: "Caddy on, NPM off"
    scenarios: [hosts]
    profiles: [caddy-stock, nginx-npm]
    numbers: ["On for HTTPS", "Module present, config off"]
    values: [1, 0]
  - finding: restart
    seed: "001"
    says: "Caddy's HTTP container was answering again in 3 seconds"
    number: "3 s and 5 s"
    scenarios: [hosts]
    profiles: [caddy-stock, nginx-npm]
    numbers: ["3 seconds, certificate unchanged", "5 seconds, database still there"]
    values: [3, 5]
`

// hostsUnitOf is a finished hosts unit with one run per spec (run 1..N).
func hostsUnitOf(scenario, profile string, runs ...spec) *results.Unit {
	u := &results.Unit{ID: scenario + "/" + profile + "/p256/1cpu", Scenario: scenario, Family: scenario, Kind: plan.KindHosts, Method: plan.MethodClosed,
		Profile: profile, Proxy: proxyOf(profile), Key: "p256", Layout: "1cpu", Status: results.StatusDone}
	for i, s := range runs {
		s.phase, s.run = results.PhaseRun, i+1
		u.Steps = append(u.Steps, mkStep(i+1, s))
	}
	return u
}

// hostsFile: caddy-stock's three runs are seed 001's (4,147, 4,018 and
// 2,314 2xx/s) with p99s chosen so that the median of the p99s (20 ms)
// is not the middle run's (37 ms); nginx-npm answers 502s with the
// proxy's port errors in two runs; haproxy ran no hosts unit.
func hostsFile(t *testing.T) *results.File {
	f := synthFileOf(t, hostsPlan)
	caddy := hostsUnitOf("hosts", "caddy-stock",
		spec{ok: 4147 * 24, p99: 20_000, cpu: 0.95},
		spec{ok: 4018 * 24, p99: 37_000, cpu: 0.97},
		spec{ok: 2314 * 24, p99: 10_000, cpu: 0.99})
	npm := hostsUnitOf("hosts", "nginx-npm",
		spec{ok: 1018 * 24, bad: 2470, status502: 2470, p99: 150_000},
		spec{ok: 977 * 24, bad: 1224, status502: 1224, p99: 176_000},
		spec{ok: 289 * 24, p99: 400_000})
	npm.Steps[0].ProxyAddrErrors, npm.Steps[1].ProxyAddrErrors = 2470, 1224
	caddy.Steps[1].Backend = results.BackendDelta{Requests: 4018 * 24, Apps: make([]uint64, 20), Valid: true}
	caddy.Steps[1].Backend.Apps[0] = 4018 * 24
	npm.Steps[1].LimitedBy, npm.Steps[1].LimitedWhy = results.LimitPorts, `the proxy logged 1224 "Cannot assign requested address" lines`
	sp := hostsUnitOf("hosts-spread", "caddy-stock", spec{ok: 4000 * 24})
	sp.Steps[0].Backend = results.BackendDelta{Requests: 20 * 4800, Apps: make([]uint64, 20), Valid: true}
	for i := range sp.Steps[0].Backend.Apps {
		sp.Steps[0].Backend.Apps[i] = 4800 + uint64(i%2)*10
	}
	f.Units = []*results.Unit{caddy, npm, sp}
	f.Proxies = []results.ProxyInfo{
		{Layout: "1cpu", Profile: "caddy-stock", Proxy: "caddy", Key: "p256", Version: "v2.11.9", Routes: 20, IdleMemory: 12 << 20, IdleNeed: 8 << 20},
		{Layout: "1cpu", Profile: "caddy-stock", Proxy: "caddy", Key: "p256", Version: "v2.11.9", IdleMemory: 99 << 20, IdleNeed: 90 << 20}, // one site: not the hosts row's
		{Layout: "1cpu", Profile: "nginx-npm", Proxy: "nginx", Key: "p256", Version: "nginx 1.22.1", Routes: 20, IdleMemory: 6 << 20, IdleNeed: 3 << 20},
	}
	f.Configs5Hosts = []results.ConfigSize{
		{Profile: "caddy-stock", Dir: "configs-5-hosts/caddy-stock", Files: []proxy.FileLines{{Name: "Caddyfile", Lines: 31}}, Lines: 31},
		{Profile: "haproxy", Dir: "configs-5-hosts/haproxy", Files: []proxy.FileLines{{Name: "haproxy.cfg", Lines: 45}}, Lines: 45},
		{Profile: "nginx-npm", Dir: "configs-5-hosts/nginx-npm", Files: []proxy.FileLines{{Name: "nginx.conf", Lines: 150}}, Lines: 150},
	}
	f.Checks = []results.ProxyCheck{
		{Layout: "1cpu", Profile: "caddy-stock", Key: "p256", Checks: session.Checks{Bodies: []session.BodyCheck{{Proto: "h1", OK: true, AltSvc: `h3=":443"`}, {Proto: "h3", OK: true}}, H3: true, H3Advertised: true, Restarted: true, RestartS: 0.15, CertUnchanged: true}},
		{Layout: "1cpu", Profile: "nginx-npm", Key: "p256", Checks: session.Checks{Bodies: []session.BodyCheck{{Proto: "h1", OK: true}}, Restarted: true, RestartS: 0.1, CertUnchanged: true}},
	}
	return f
}

// The hosts row is the middle run by 2xx/s with the p99 of that same run,
// not the median of the runs' p99s; it shows the idle memory with the
// scenario's routes, the 502s and other errors of that run and what
// limited it.
func TestHostsMiddleRun(t *testing.T) {
	r, md := build(t, hostsFile(t))
	var sec *Section
	for _, s := range r.Sections {
		if s.Scenario == "hosts" {
			sec = s
		}
	}
	if sec == nil || len(sec.Tables) != 2 {
		t.Fatalf("no hosts section with a main and a detail table:\n%s", md)
	}
	main := sec.Tables[0]
	if got := strings.Join(main.Header, " | "); got != "Proxy | Idle memory.current, 20 routes | Idle anon+kernel | 2xx/s (middle run) | p99, that run | 502s, that run | Other errors | Proxy CPU | Limited by" {
		t.Errorf("header %s", got)
	}
	want := map[string]string{
		"caddy-stock": "caddy-stock | 12.0 MiB | 8.0 MiB | 4,018 (2,314–4,147, n=3) | 37 ms | 0 | 0 | 0.97 cores | -",
		"nginx-npm":   "nginx-npm | 6.0 MiB | 3.0 MiB | 977 (289–1,018, n=3) | 176 ms | 1,224 | 0 | 0.00 cores | ports",
	}
	for _, row := range main.Rows {
		if got := strings.Join(row, " | "); got != want[row[0]] {
			t.Errorf("row\n got %s\nwant %s", got, want[row[0]])
		}
	}
	if !strings.Contains(md, "4,018 2xx/s, p99 37 ms, 0 502 (the row); 2,314 2xx/s, p99 10 ms, 0 502; the row's run: all 96,432 reached app01") || !strings.Contains(md, "977 2xx/s, p99 176 ms, 1,224 502 (1,224 \"Cannot assign requested address\") (the row)") {
		t.Errorf("the detail table must list every run and mark the row's:\n%s", md)
	}
}

// Seed 001's section and rows: the seed's cited numbers beside this run's,
// reproduced by the seeds' rules.
func TestSeed001Table(t *testing.T) {
	r, md := build(t, hostsFile(t))
	if r.Seed001 == nil {
		t.Fatalf("no seed-001 section:\n%s", md)
	}
	tb := r.Seed001
	if got := strings.Join(tb.Header, " | "); got != " | caddy-stock, v2.11.9 | nginx-npm, nginx 1.22.1" {
		t.Errorf("seed-001 header %q", got)
	}
	rows := map[string]string{}
	for _, row := range tb.Rows {
		rows[row[0]] = strings.Join(row[1:], " | ")
	}
	for name, want := range map[string]string{
		"Idle RAM with 20 routes (memory.current)": "12.0 MiB (anon+kernel 8.0 MiB) (seed: 10.9 MiB) | 6.0 MiB (anon+kernel 3.0 MiB) (seed: 83.9 MiB)",
		"Median requests/sec (2xx)":                "4,018 (2,314–4,147, n=3) (seed: 4,018) | 977 (289–1,018, n=3) (seed: 977)",
		"99th percentile, that run":                "37 ms (seed: 37 ms) | 176 ms (seed: 176 ms)",
		"502s per run":                             "0, 0, 0 | 2,470, 1,224, 0 (port exhaustion: 3,694 \"Cannot assign requested address\" in its log)",
		"Lines for five hostnames":                 "31 (Caddyfile 31) (seed: 15) | 150 (nginx.conf 150) (seed: 340 (68 per host))",
		"HTTP/3 in this build":                     "on for HTTPS (Alt-Svc: h3) (seed: On for HTTPS) | off (this build and config serve none) (seed: Module present, config off)",
		"After a restart":                          "0.15 s, certificate unchanged (seed: 3 seconds, certificate unchanged) | 0.10 s, certificate unchanged (seed: 5 seconds, database still there)",
		"Every host in turn (hosts-spread), 2xx/s": "4,000 (backends app01..app20 got 4.99–5.01% each) | -",
	} {
		if rows[name] != want {
			t.Errorf("%s:\n got %s\nwant %s", name, rows[name], want)
		}
	}
	for _, c := range []struct{ finding, reproduced, size string }{
		{"hosts-idle-memory", "no", "caddy-stock 1.10x, nginx-npm 0.07x the seed's"},
		{"hosts-rate", "yes", "caddy-stock 1.00x, nginx-npm 1.00x the seed's"},
		{"hosts-p99", "yes", "caddy-stock 1.00x, nginx-npm 1.00x the seed's"},
		{"hosts-502", "yes", "-"},
		{"config-lines", "yes", "caddy-stock 2.07x, haproxy 1.12x, nginx-npm 0.44x the seed's"},
		{"h3-build", "yes", "-"},
		{"restart", "yes", "caddy-stock 0.05x, nginx-npm 0.02x the seed's"},
	} {
		row := seedRow(t, r, c.finding)
		if row[4] != c.reproduced || row[5] != c.size {
			t.Errorf("%s: %q, want reproduced %q, size %q", c.finding, row, c.reproduced, c.size)
		}
	}
	// The Checks table names the version of a profile measured only with
	// routes (nginx-npm ran in the hosts scenario alone).
	if r.Checks == nil || len(r.Checks.Rows) != 2 || r.Checks.Rows[1][0] != "nginx-npm" || r.Checks.Rows[1][1] != "nginx 1.22.1" {
		t.Errorf("checks rows %v: want nginx-npm's version", r.Checks)
	}
	// caddy-stock returning 502s too: the NPM row no longer reproduces.
	f := hostsFile(t)
	f.Units[0].Steps[2].Result.Status["502"] = 5
	if r, _ := build(t, f); seedRow(t, r, "hosts-502")[4] != "no" {
		t.Errorf("hosts-502 with caddy-stock answering 502: %q, want no", seedRow(t, r, "hosts-502"))
	}
	// nginx-npm's 502s without the port error in its log: not the seed's cause.
	f = hostsFile(t)
	f.Units[1].Steps[0].ProxyAddrErrors, f.Units[1].Steps[1].ProxyAddrErrors = 0, 0
	if r, _ := build(t, f); seedRow(t, r, "hosts-502")[4] != "no" {
		t.Errorf("hosts-502 without port exhaustion: %q, want no", seedRow(t, r, "hosts-502"))
	}
	// The two rates within the noise: the order is not shown.
	f = hostsFile(t)
	for _, st := range f.Units[1].Steps {
		st.Result.AchievedRate *= 3.9
	}
	if row := seedRow(t, build1(t, f), "hosts-rate"); row[4] != "no" || !strings.Contains(row[3], "within this run's noise") {
		t.Errorf("hosts-rate with overlapping runs: %q, want no, within the noise", row)
	}
}

func build1(t *testing.T, f *results.File) *Report {
	r, _ := build(t, f)
	return r
}
