package report

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/search"
)

func TestDumpMarkdown(t *testing.T) {
	if os.Getenv("REPORT_DUMP") == "" {
		t.Skip("set REPORT_DUMP=1 to print the synthetic report")
	}
	r, err := Build(fullFile(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + string(r.Markdown()))
}

func build(t *testing.T, f *results.File) (*Report, string) {
	t.Helper()
	r, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	return r, string(r.Markdown())
}

func TestTableRows(t *testing.T) {
	_, md := build(t, fullFile(t))
	for _, row := range []string{
		// the main table, then its detail table with the rest of each row
		"| Proxy | Rate found (req/s) | p50 | p95 | p99 | Errors | Proxy CPU | Load anon+kernel | Limited by |",
		"| Proxy | Idle anon+kernel | Load page cache | Load memory.current | Throttled | Procs/threads | Generator |",
		"| nginx-keepalive | 20,000 | 500 µs | 1.50 ms | 2.50 ms | 0% | 0.80 cores | 8.0 MiB |",
		"| nginx-keepalive | 5.0 MiB | 1.0 MiB | 9.0 MiB | - | - | ok |",
		"| caddy-stock | 11,960 | 500 µs | 1.50 ms | 2.50 ms | 0% | 0.80 cores | 8.0 MiB |",
		"| caddy-stock | 10.0 MiB | 1.0 MiB | 9.0 MiB | - | - | ok |",
		"| nginx-stock (ECDSA P-256) | 4,100 |",
		"| nginx-stock (RSA 4096) | 410 |",
		"| nginx-stock | 4,100 | 410 |", // key matrix
		"| nginx-stock | 1,176 | 500 µs | 1.25 ms | 2.00 ms | 94.7% | 28,200 |",
		"| nginx-stock | 5.0 MiB | - | - | - | - | ok | - | - | t=7 s, after 28,231 2xx |",
		"| nginx-keepalive | 75,000 | 500 µs | 1.25 ms | 2.00 ms | 0% | 0 |",
		"| nginx-keepalive | 5.0 MiB | - | - | - | - | ok | - | - | none |",
		"| keepalive-1k | nginx-stock (ECDSA P-256) | 4,000 | 15,200 | 3.8x on 4x the CPUs |",
		"Ranking by rate found: 1. nginx-keepalive 20,000 ±4%, 2. caddy-stock 11,960 ±4%, 3. nginx-stock 4,000 ±4%.",
		"- keepalive-1k on h2o (p256, 1cpu): skipped: not installed: h2o",
		"| nginx-stock | nginx 1.22.1 | ECDSA P-256 | 1cpu | 5.0 MiB | 1.0 MiB | 6.0 MiB | 5.0 MiB |",
	} {
		if !strings.Contains(md, row) {
			t.Errorf("report lacks\n%s", row)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

func TestGeneratorLimitedRowsMarkedAndExcluded(t *testing.T) {
	f := synthFile(t)
	ok := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	lim := searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 9000,
		spec{rate: 8000, ok: 8000 * 24}, spec{rate: 16000, verdict: "gen-limited", ok: 9500 * 24, p99: 1_500_000, genLimited: true})
	lim.Search.GeneratorLimited = true
	f.Units = append(f.Units, ok, lim)
	r, md := build(t, f)
	if !strings.Contains(md, "| nginx-keepalive † | ≥ 9,000 |") || !strings.Contains(md, "| bottleneck above this rate |") {
		t.Fatalf("generator-limited row not marked:\n%s", md)
	}
	if !strings.Contains(md, "Ranking by rate found: 1. nginx-stock 4,000 ±4% (left out, generator-limited: nginx-keepalive)") {
		t.Fatalf("ranking:\n%s", md)
	}
	if !strings.Contains(md, "at 16,000 req/s: loop 0 (cpu 1) was 97% busy") {
		t.Fatalf("generator reason missing:\n%s", md)
	}
	var found bool
	for _, s := range r.Findings {
		if strings.Contains(s, "the generator, not the proxy, was the bottleneck") && strings.Contains(s, "nginx-keepalive") {
			found = true
		}
	}
	if !found {
		t.Fatalf("findings %v", r.Findings)
	}
	// a run without generator limits says nothing about it
	f.Units = f.Units[:1]
	r, _ = build(t, f)
	for _, s := range r.Findings {
		if strings.Contains(s, "generator") {
			t.Fatalf("generator finding without data: %s", s)
		}
	}
}

func findingsOf(t *testing.T, f *results.File) string {
	r, _ := build(t, f)
	return strings.Join(r.Findings, "\n")
}

func TestFindingsFollowTheData(t *testing.T) {
	all := findingsOf(t, fullFile(t))
	for _, want := range []string{
		"nginx-stock (sustained): 502s began after 28,231 successful requests (at t=7 s) while TIME_WAIT in the proxy's namespace reached 28,200 of the 28,232-port range; the backend accepted 1.00 new connections per request",
		"Use nginx-keepalive: in this run it had no failures in sustained",
		"works and fails in turns: working stretches of 30, 30 s, failing stretches of 30 s",
		"caddy-stock (sustained): throughput fell from 12,000/s in the first third to 6,885/s in the last third while TIME_WAIT in its namespace rose to 27,000 (96% of the 28,232-port range); the backend accepted 0.33 new connections per request at 100 connections",
		"4,100 new TLS connections/s with an ECDSA P-256 certificate, 410 with RSA 4096 (10.0x fewer)",
		"nginx-stock (keepalive-1k) scaled almost linearly: 3.8x",
		"caddy-stock (keepalive-1k) did not scale",
		"caddy-stock (keepalive-1k): throughput collapsed above 11,960 req/s: offered 14,000, it delivered only 1,900/s",
		"caddy-stock grew from 10.0 MiB idle to 199.0 MiB under load (anon+kernel",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack %q", want)
		}
	}
	if t.Failed() {
		t.Log(all)
	}
}

func TestNoFindingsWithoutThePattern(t *testing.T) {
	f := synthFile(t)
	f.Units = append(f.Units,
		searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000, spec{rate: 8000, verdict: "fail", ok: 7000 * 24, p99: 2_000_000}),
		searchUnit("keepalive-1k@4cpu", "nginx-stock", "p256", "4cpu", 8000), // 2x on 4x: neither flat nor linear
		searchUnit("handshake", "nginx-stock", "p256", "1cpu", 4100),
		searchUnit("handshake", "nginx-stock", "rsa4096", "1cpu", 3000),
		sustainedUnit("nginx-keepalive", spec{ok: 20000 * 90, secs: flat(90, 20000), tw: make([]int, 90), conns: 40, reqs: 20000 * 90, mem: 12 << 20}),
	)
	if got := findingsOf(t, f); got != "" {
		t.Fatalf("findings without a pattern in the data:\n%s", got)
	}
}

func TestPortExhaustionNeedsItsEvidence(t *testing.T) {
	cliff := func(s spec) *results.File {
		f := synthFile(t)
		f.Units = append(f.Units, sustainedUnit("nginx-stock", s))
		return f
	}
	base := spec{ok: 28231, bad: 500000, status502: 500000, secs: cliffSeconds(), tw: rising(90, 28200), conns: 28731, reqs: 28731}
	if !strings.Contains(findingsOf(t, cliff(base)), "502s began after 28,231") {
		t.Fatal("the full pattern gives no finding")
	}
	// As measured: the requests in flight when the range ran out finish in
	// the next second; the range served all of them.
	drain := base
	drain.secs = append([]result.Second{}, cliffSeconds()...)
	for i := range drain.secs {
		if drain.secs[i].Non2xx == 3000 { // the first failing second
			drain.secs[i].OK -= 35
			drain.secs[i+1].OK = 35
			break
		}
	}
	if s := findingsOf(t, cliff(drain)); !strings.Contains(s, "after 28,231 successful requests in all (28,196 by the end of that second, the rest in flight then") {
		t.Fatalf("in-flight requests finishing after the first 502 are not counted: %s", s)
	}
	reused := base
	reused.conns = 30 // the backend saw pooled connections: not this cause
	if s := findingsOf(t, cliff(reused)); strings.Contains(s, "began after") {
		t.Fatalf("finding with reused backend connections: %s", s)
	}
	lowTW := base
	lowTW.tw = rising(90, 900) // ports never filled, no error-log evidence
	if s := findingsOf(t, cliff(lowTW)); strings.Contains(s, "began after") {
		t.Fatalf("finding without full port range: %s", s)
	}
	// the error log alone (no TIME_WAIT count, e.g. --no-cgroups) is evidence too
	f := cliff(lowTW)
	f.Units[0].ErrorLog.Causes["addr_not_avail"] = 1200
	s := findingsOf(t, f)
	if !strings.Contains(s, "1,200 \"Cannot assign requested address\" lines") || strings.Contains(s, "port range") {
		t.Fatalf("error-log evidence: %s", s)
	}
	healthy := base
	healthy.secs, healthy.bad, healthy.status502 = flat(90, 4000), 0, 0
	if s := findingsOf(t, cliff(healthy)); strings.Contains(s, "began after") {
		t.Fatalf("finding without failures: %s", s)
	}
}

func TestQueueingAndTailFindings(t *testing.T) {
	f := synthFile(t)
	u := searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 23700)
	for _, st := range u.Steps {
		st.Result.Latency.P50 = 149_000
	}
	fixed := &results.Unit{ID: "fx", Scenario: "fixed-rate", Kind: "fixed-rate", Method: "fixed", Profile: "caddy-stock", Proxy: "caddy", Key: "p256", Layout: "1cpu", Status: results.StatusDone,
		Steps: []*results.Step{mkStep(1, spec{phase: "run", run: 1, rate: 1500, ok: 1500 * 24, p50: 1000, p99: 300_000})}}
	fixed.Steps[0].Result.Latency.P95 = 140_000
	f.Units = append(f.Units, u, fixed)
	s := findingsOf(t, f)
	if !strings.Contains(s, "median 149 ms at its rate found of 23,700 req/s: it is already queueing") {
		t.Fatalf("queueing: %s", s)
	}
	if !strings.Contains(s, "caddy-stock at 1,500 req/s (fixed-rate): p95 140 ms with a median of 1.00 ms") {
		t.Fatalf("tail: %s", s)
	}
}

func TestHTMLIsOffline(t *testing.T) {
	r, _ := build(t, fullFile(t))
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Fatalf("HTML contains %q", bad)
		}
	}
	srcs := regexp.MustCompile(`(?i)(src|href)\s*=\s*"([^"]*)"`).FindAllStringSubmatch(html, -1)
	if len(srcs) == 0 {
		t.Fatal("no embedded charts")
	}
	for _, m := range srcs {
		if !strings.HasPrefix(m[2], "data:image/png;base64,") && !strings.HasPrefix(m[2], "#") {
			t.Fatalf("%s=%q is not embedded", m[1], m[2])
		}
	}
	for _, want := range []string{"<td>nginx-keepalive</td><td>20,000</td>", "<h2 id=\"findings\">Findings</h2>", "Scaling across server CPU counts"} {
		if !strings.Contains(html, want) {
			t.Fatalf("HTML lacks %q", want)
		}
	}
}

func TestChartsArePNG(t *testing.T) {
	r, _ := build(t, fullFile(t))
	n := 0
	titles := map[string]bool{}
	for _, s := range r.Sections {
		for _, c := range s.Charts {
			img, err := png.Decode(bytes.NewReader(c.PNG))
			if err != nil {
				t.Fatalf("%s: not a PNG: %v", c.Title, err)
			}
			if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 300 {
				t.Fatalf("%s: %v", c.Title, b)
			}
			if !strings.HasPrefix(c.File, "charts/") || !strings.HasSuffix(c.File, ".png") {
				t.Fatalf("file %s", c.File)
			}
			titles[c.Title] = true
			n++
		}
	}
	for _, want := range []string{
		"keepalive-1k: latency by percentile at the rate found",
		"keepalive-1k: search steps",
		"sustained, nginx-stock: per second (closed loop)",
		"fixed-rate, nginx-stock: per second (1,000 req/s offered)",
	} {
		if !titles[want] {
			t.Errorf("no chart %q (have %v)", want, titles)
		}
	}
	if n < 8 {
		t.Fatalf("%d charts", n)
	}
}

func TestPercentileTicks(t *testing.T) {
	ticks := percentileTicks{}.Ticks(1, 12000)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0% 50% 90% 99% 99.9% 99.99%" {
		t.Fatalf("ticks %q", got)
	}
}

func TestPhases(t *testing.T) {
	ph := phases(cycleSeconds(), 3)
	if len(ph) != 3 || ph[0].failing || !ph[1].failing || ph[1].start != 30 || ph[1].end != 60 || ph[2].failing {
		t.Fatalf("%+v", ph)
	}
	// a one-second blip does not make a cycle
	ps := flat(60, 1000)
	ps[20] = result.Second{T: 20, Non2xx: 1000}
	if ph := phases(ps, 3); len(ph) != 1 {
		t.Fatalf("blip: %+v", ph)
	}
}

func TestRenderAndRerender(t *testing.T) {
	dir := t.TempDir()
	f := fullFile(t)
	if _, err := Render(f, dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{MarkdownFile, HTMLFile, "charts/keepalive-1k-spectrum.png", "charts/sustained-nginx-stock-p256-series.png"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", name, err)
		}
	}
	md1, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	// from results.json, as `loadlab report DIR` does
	store, _, err := results.Open(dir, f.Plan, results.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store.F = f
	if err := store.Save(); err != nil {
		t.Fatal(err)
	}
	store.Close()
	os.Remove(filepath.Join(dir, MarkdownFile))
	if _, err := RenderDir(dir); err != nil {
		t.Fatal(err)
	}
	md2, _ := os.ReadFile(filepath.Join(dir, MarkdownFile))
	// the timestamps come back from JSON; everything else must match
	strip := regexp.MustCompile(`last update [^,]*,`)
	if strip.ReplaceAllString(string(md1), "") != strip.ReplaceAllString(string(md2), "") {
		t.Fatalf("re-rendered report differs:\n%s\n----\n%s", md1, md2)
	}
	if _, err := RenderDir(t.TempDir()); err == nil {
		t.Fatal("rendering an empty directory succeeded")
	}
}

var _ = search.Pass

func TestSlowdownWithNewConnectionPerRequest(t *testing.T) {
	// nginx-stock across veth: no 502s, but throughput collapses as its
	// TIME_WAIT sockets fill half the range (measured on the 2-core box)
	secs := []result.Second{{T: 0, OK: 7184}, {T: 1, OK: 6911}}
	for i := 2; i < 21; i++ {
		secs = append(secs, result.Second{T: i, OK: 250})
	}
	f := synthFile(t)
	f.Units = append(f.Units, sustainedUnit("nginx-stock", spec{ok: 18000, secs: secs, tw: rising(21, 18365), conns: 18365, reqs: 18364}))
	s := findingsOf(t, f)
	for _, want := range []string{"nginx-stock (sustained): throughput fell from", "(65% of the 28,232-port range)", "1.00 new connections per request: the proxy opens a new backend connection per request", "at most about 470 new connections per second", "Use nginx-keepalive (idle backend connections kept in a pool"} {
		if !strings.Contains(s, want) {
			t.Fatalf("finding lacks %q:\n%s", want, s)
		}
	}
	// the same slowdown with pooled connections and few TIME_WAIT: nothing to say about ports
	f = synthFile(t)
	f.Units = append(f.Units, sustainedUnit("nginx-keepalive", spec{ok: 18000, secs: secs, tw: rising(21, 40), conns: 30, reqs: 18364}))
	if s := findingsOf(t, f); s != "" {
		t.Fatalf("finding without the pattern: %s", s)
	}
}

// TestCooldownNotes: a wait that ended at its cap is said so; one that found
// TIME_WAIT already drained is not.
func TestCooldownNotes(t *testing.T) {
	f := &results.File{Units: []*results.Unit{{
		Scenario: "keepalive-1k", Profile: "nginx-stock", Key: "p256",
		Steps: []*results.Step{
			{CooldownS: 5, CooldownTW: [2]int{20000, 19000}, CooldownCapped: true},
			{CooldownS: 0, CooldownTW: [2]int{10, 10}},
		},
	}}}
	notes := cooldownNotes(f)
	if len(notes) != 1 || !strings.Contains(notes[0], "2 after failed steps") || !strings.Contains(notes[0], "1 ended at the cap") {
		t.Fatalf("notes %q", notes)
	}
}

// The generator's ceiling shows in the scenario's intro; a proxy whose
// search stopped at it reads "≥ ceiling" and stays out of the ranking; the
// others get their headroom (ceiling over rate).
func TestCeilingInReport(t *testing.T) {
	f := synthFile(t)
	ceil := searchUnit("keepalive-1k", "loadlab-serve", "p256", "1cpu", 16000)
	ceil.ID, ceil.Search.GeneratorLimited = "ceiling/keepalive-1k/p256/1cpu", true
	f.Ceilings = []*results.Unit{ceil}
	fast := searchUnit("keepalive-1k", "nginx-keepalive", "p256", "1cpu", 16000)
	fast.Search.Capped = true
	slow := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	for _, u := range []*results.Unit{fast, slow} {
		u.Ceiling, u.MaxRate = ceil.ID, 16000
	}
	f.Units = append(f.Units, fast, slow)
	_, md := build(t, f)
	for _, want := range []string{
		"Generator ceiling on this machine: 16,000 req/s, measured with the same search against loadlab serve",
		"| nginx-keepalive | ≥ 16,000 (generator ceiling on this machine) |",
		"| none: at the ceiling |",
		"| ceiling 16,000, 4.0x |",
		"Ranking by rate found: 1. nginx-stock 4,000 ±4%.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}

// A pool smaller than the concurrency leaks ports even while throughput
// holds: the finding names the leak and the pool-128 variant beside it.
func TestPoolLeakAgainstItsVariant(t *testing.T) {
	f := synthFile(t)
	f.Units = append(f.Units,
		sustainedUnit("nginx-keepalive", spec{ok: 8000 * 30, secs: flat(30, 8000), tw: rising(30, 9000), conns: 8000 * 30 * 3 / 10, reqs: 8000 * 30}),
		sustainedUnit("nginx-keepalive128", spec{ok: 9000 * 30, secs: flat(30, 9000), tw: make([]int, 30), conns: 40, reqs: 9000 * 30}),
	)
	f.Units[len(f.Units)-1].ID = "sustained/nginx-keepalive128/p256/1cpu"
	r, _ := build(t, f)
	all := strings.Join(r.Findings, "\n")
	want := "nginx-keepalive (sustained, 100 connections): the backend accepted 0.30 new connections per request and TIME_WAIT in the proxy's namespace rose to 9,000 (32% of the 28,232-port range): it keeps fewer idle backend connections than the concurrency"
	if !strings.Contains(all, want) || !strings.Contains(all, "nginx-keepalive128 in the same scenario: 0.00 new connections per request, TIME_WAIT at most 0.") {
		t.Errorf("findings:\n%s\nwant the leak of nginx-keepalive against nginx-keepalive128", all)
	}
	if strings.Contains(all, "nginx-keepalive128 (sustained") {
		t.Errorf("the pool-128 variant is reported as leaking:\n%s", all)
	}
}

// The cliff's count accounts for the ports the step started without: in
// fresh namespaces none, in a reused one the lab's own earlier requests
// (seed 003's 28,231 = the 28,232-port range less one).
func TestCliffAccountsForTheLabsRequests(t *testing.T) {
	for _, c := range []struct {
		renew  float64
		before uint64
		ok     uint64
		want   string
	}{
		{0.3, 0, 28231, "the step started in fresh network namespaces with 0 sockets in TIME_WAIT and 0 earlier requests through the proxy (the lab's own readiness and idle-memory probes, earlier steps): 28,231 + 0 = 28,231, the 28,232-port range less 1"},
		{0, 29, 28202, "the step started in the namespace earlier runs used with 0 sockets in TIME_WAIT and 29 earlier requests through the proxy (the lab's own readiness and idle-memory probes, earlier steps): 28,202 + 29 = 28,231, the 28,232-port range less 1"},
	} {
		f := synthFile(t)
		u := sustainedUnit("nginx-stock", spec{ok: c.ok, bad: 500000, status502: 500000, secs: cliffOK(c.ok), tw: rising(90, 28200), conns: c.ok + 500, reqs: c.ok + 500})
		st := u.Steps[0]
		st.StartChecked, st.RenewS, st.BackendReqsBefore = true, c.renew, c.before
		f.Units = append(f.Units, u)
		r, _ := build(t, f)
		if all := strings.Join(r.Findings, "\n"); !strings.Contains(all, c.want) {
			t.Errorf("findings:\n%s\nwant %q", all, c.want)
		}
	}
}

// cliffOK is cliffSeconds with ok 2xx before the 502s.
func cliffOK(ok uint64) []result.Second {
	var ps []result.Second
	total := uint64(0)
	for s := 0; s < 90; s++ {
		switch {
		case total+4000 <= ok:
			ps = append(ps, result.Second{T: s, OK: 4000})
			total += 4000
		case total < ok:
			ps = append(ps, result.Second{T: s, OK: ok - total, Non2xx: 3000})
			total = ok
		default:
			ps = append(ps, result.Second{T: s, Non2xx: 9000})
		}
	}
	return ps
}

// keepalive-1k-h2 is its own section; its table says the protocol the
// generator spoke, HTTP/2 with its streams (and the proxy's lower limit),
// beside keepalive-1k's HTTP/1.1.
func TestH2SectionSaysTheProtocol(t *testing.T) {
	f := synthFileOf(t, `
name: synth-h2
profiles: [nginx-stock, caddy-stock]
keys: [p256]
scenarios:
  - kind: keepalive-1k
  - kind: keepalive-1k-h2
`)
	h1 := searchUnit("keepalive-1k", "nginx-stock", "p256", "1cpu", 4000)
	for _, st := range h1.Steps {
		st.Result.Protocol = "http/1.1"
	}
	h2n := searchUnit("keepalive-1k-h2", "nginx-stock", "p256", "1cpu", 6000)
	h2c := searchUnit("keepalive-1k-h2", "caddy-stock", "p256", "1cpu", 5000)
	for i, u := range []*results.Unit{h2n, h2c} {
		u.Kind = plan.KindKeepaliveH2
		for _, st := range u.Steps {
			st.Result.Protocol, st.Result.Streams, st.Result.H2 = "h2", 10, &result.H2Info{}
			if i == 0 {
				st.Result.H2.ServerMaxStreams = 8
			}
		}
	}
	f.Units = append(f.Units, h1, h2n, h2c)
	_, md := build(t, f)
	for _, want := range []string{
		"| nginx-stock | 4,000 |",
		"| ok | ", // the h1 row's generator cell
		"| HTTP/1.1 |",
		"| nginx-stock | 6,000 |",
		"| HTTP/2, 10 streams per connection (the proxy allowed 8) |",
		"| caddy-stock | 5,000 |",
		"| HTTP/2, 10 streams per connection |",
		"over HTTP/2 (ALPN h2 on the proxy's TLS listener)",
		"Ranking by rate found: 1. nginx-stock 6,000 ±4%, 2. caddy-stock 5,000 ±4%.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
