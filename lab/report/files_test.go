package report

import (
	"strings"
	"testing"

	"github.com/loadlab/loadlab/lab/plan"
	"github.com/loadlab/loadlab/lab/results"
)

const filesPlan = `
name: files
profiles: [nginx-files, nginx-files-nosendfile, caddy-files, caddy-respond, nginx-stock]
idle_memory: {quiet: 1s, samples: 3, every: 1s}
scenarios:
  - {name: files-1k-http, role: origin, kind: keepalive-1k, method: closed, size: 1k, scheme: http, runs: 3}
  - {name: files-1k-https, role: origin, kind: keepalive-1k, method: closed, size: 1k, scheme: https, runs: 3}
  - {name: files-100k-http, role: origin, kind: keepalive-1k, method: closed, size: 100k, scheme: http, runs: 3}
  - {name: files-100k-https, role: origin, kind: keepalive-1k, method: closed, size: 100k, scheme: https, runs: 3}
  - {name: proxy-20s, kind: keepalive-1k, method: closed, runs: 1}
seeds:
  - {finding: per-core, seed: "003", says: "s", number: "1.2x to 5.1x", scenarios: [files-1k-http, files-1k-https, files-100k-http, files-100k-https], profiles: [nginx-files, caddy-files]}
  - {finding: sendfile, seed: "003", says: "s", number: "69,989 to 27,989", value: 0.40, scenarios: [files-100k-http], profiles: [nginx-files, nginx-files-nosendfile]}
  - {finding: https-faster, seed: "003", says: "s", number: "29,449 vs 20,981", value: 1.40, scenarios: [files-1k-http, files-1k-https], profiles: [caddy-files]}
  - {finding: https-faster, seed: "003", says: "s", number: "29,449 vs 20,981", value: 1.40, scenarios: [files-1k-http, files-1k-https], profiles: [nginx-files]}
`

// fileRun is one server on one file test: its median 2xx/s and CPU.
type fileRun struct {
	scenario, profile string
	rate, cpu         float64
	genLimited        bool
}

// filesFile is a run shaped like seed 003's file tests on one server CPU:
// three closed-loop runs per row at 0.99, 1 and 1.01 times the rate.
func filesFile(t *testing.T, runs []fileRun) *results.File {
	f := synthFileOf(t, filesPlan)
	for _, r := range runs {
		u := &results.Unit{ID: r.scenario + "/" + r.profile + "/p256/1cpu", Scenario: r.scenario, Family: r.scenario, Kind: plan.KindKeepalive, Method: plan.MethodClosed,
			Profile: r.profile, Proxy: proxyOf(r.profile), Key: "p256", Layout: "1cpu", Status: results.StatusDone}
		for i, k := range []float64{0.99, 1, 1.01} {
			st := mkStep(i+1, spec{phase: results.PhaseRun, run: i + 1, ok: uint64(r.rate * k * 24), p99: 3000 + int64(i), cpu: r.cpu, mem: 8 << 20, genLimited: r.genLimited && i == 1})
			st.LimitedBy = results.LimitProxy
			u.Steps = append(u.Steps, st)
		}
		f.Units = append(f.Units, u)
	}
	return f
}

// seed003Runs are numbers of the seed's shape on one core: nginx far
// faster per core, sendfile doubling 100 KB over HTTP and nothing over
// HTTPS, caddy-files faster over HTTPS than HTTP for 1 KB, caddy-respond
// far above caddy-files.
func seed003Runs() []fileRun {
	return []fileRun{
		{"files-1k-http", "nginx-files", 30000, 0.98, false},
		{"files-1k-http", "nginx-files-nosendfile", 29950, 0.98, false},
		{"files-1k-http", "caddy-files", 10000, 0.97, false},
		{"files-1k-http", "caddy-respond", 31000, 0.97, false},
		{"files-1k-https", "nginx-files", 20000, 0.98, false},
		{"files-1k-https", "nginx-files-nosendfile", 20000, 0.98, false},
		{"files-1k-https", "caddy-files", 14000, 0.97, false},
		{"files-1k-https", "caddy-respond", 28000, 0.97, true},
		{"files-100k-http", "nginx-files", 35000, 0.95, false},
		{"files-100k-http", "nginx-files-nosendfile", 14000, 0.98, false},
		{"files-100k-http", "caddy-files", 6800, 0.97, false},
		{"files-100k-http", "caddy-respond", 31000, 0.97, false},
		{"files-100k-https", "nginx-files", 7500, 0.98, false},
		{"files-100k-https", "nginx-files-nosendfile", 7450, 0.98, false},
		{"files-100k-https", "caddy-files", 6200, 0.97, false},
		{"files-100k-https", "caddy-respond", 28000, 0.97, false},
	}
}

// The table has one row per server x size x scheme in test order, the
// median run's 2xx/s, p99 and CPU, 2xx/s per core and the runs' spread;
// a generator-limited row is marked.
func TestFilesTable(t *testing.T) {
	r, err := Build(filesFile(t, seed003Runs()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Files == nil {
		t.Fatal("no Serving files table")
	}
	tb := r.Files
	if len(tb.Rows) != 16 {
		t.Fatalf("%d rows, want 16 (the proxy scenario is not a file test)", len(tb.Rows))
	}
	want := [][]string{
		{"nginx-files", "1 KB", "HTTP", "30,000", "3.00 ms", "0.98 cores of 1", "30,612", "2.0% (29,700–30,300, n=3)", "proxy"},
		{"nginx-files", "100 KB", "HTTP", "35,000", "3.00 ms", "0.95 cores of 1", "36,842", "2.0% (34,650–35,350, n=3)", "proxy"},
	}
	for _, w := range want {
		found := false
		for _, row := range tb.Rows {
			if row[0] == w[0] && row[1] == w[1] && row[2] == w[2] {
				found = true
				if strings.Join(row, "|") != strings.Join(w, "|") {
					t.Errorf("row\n  %q\nwant\n  %q", row, w)
				}
			}
		}
		if !found {
			t.Errorf("no row %s %s %s", w[0], w[1], w[2])
		}
	}
	for _, fn := range tb.Footnotes {
		if fn == memoryLegend || strings.HasPrefix(fn, "Throttled") {
			t.Errorf("footnote about a column the table has not: %s", fn)
		}
	}
	var order []string
	for i, row := range tb.Rows {
		if i%4 == 0 {
			order = append(order, row[1]+" "+row[2])
		}
		if (row[0] == "caddy-respond" && row[2] == "HTTPS" && row[1] == "1 KB") != (tb.Marks[i] == "†") {
			t.Errorf("row %v marked %q", row, tb.Marks[i])
		}
	}
	if got := strings.Join(order, ", "); got != "1 KB HTTP, 1 KB HTTPS, 100 KB HTTP, 100 KB HTTPS" {
		t.Errorf("test order %s", got)
	}
	md := string(r.MarkdownTables())
	if !strings.Contains(md, "## Serving files\n\n| Server | Size | Scheme | 2xx/s | p99 | Server CPU | 2xx/s per core | Run spread |") {
		t.Errorf("printed tables lack the files table:\n%s", md)
	}
	for _, sec := range r.Sections {
		if h := strings.Join(sec.Tables[0].Header, "|"); strings.Contains(h, "Proxy") != (sec.Scenario == "proxy-20s") {
			t.Errorf("section %s header %s: Server for the file tests, Proxy for the proxy's", sec.Scenario, h)
		}
	}
	if page, err := r.HTML(); err != nil || !strings.Contains(string(page), `<h2 id="files">Serving files</h2>`) {
		t.Errorf("HTML lacks the files table (%v)", err)
	}
}

// The findings: per-core ratios per test, the sendfile effect (and its
// absence over TLS), caddy-files faster over HTTPS, the file path's cost,
// CPU-bound servers; nothing claimed inside the runs' noise.
func TestFilesFindings(t *testing.T) {
	r, err := Build(filesFile(t, seed003Runs()))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Findings, "\n")
	for _, want := range []string{
		"nginx-files served 100 KB over HTTP 2.6x faster per core than nginx-files-nosendfile (36,842 vs 14,286 2xx/s per core), 5.3x faster per core than caddy-files (36,842 vs 7,010 2xx/s per core).",
		"nginx-files served 1 KB over HTTP 3.0x faster per core than caddy-files (30,612 vs 10,309 2xx/s per core); tied within run-to-run noise with nginx-files-nosendfile.",
		"nginx-files served 1 KB over HTTPS 1.4x faster per core than caddy-files (20,408 vs 14,433 2xx/s per core); tied within run-to-run noise with nginx-files-nosendfile.",
		"With sendfile off, nginx's 100 KB over HTTP fell from 35,000 to 14,000 2xx/s (-60%); per core 36,842 vs 14,286.",
		"Sendfile on and off could not be told apart on 100 KB over HTTPS: 7,500 2xx/s with it, 7,450 without (-1%), within the runs' spread: over TLS nginx reads and encrypts every body in userspace either way (no kernel TLS).",
		"Sendfile on and off could not be told apart on 1 KB over HTTP",
		"caddy-files served 1 KB faster over HTTPS (14,000 2xx/s) than over plain HTTP (10,000, 1.4x)",
		"caddy-respond answered 31,000 2xx/s in the 1 KB over HTTP test without a file, 3.1x caddy-files serving its file (10,000): the file path, not the HTTP, makes the difference.",
		"30,000 2xx/s with it, 29,950 without (±0%)",
		"The servers were CPU-bound in every file test: 0.95 to 0.98 of their 1 server CPU busy.",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("findings lack\n  %s\nin:\n%s", want, all)
		}
	}
	for _, not := range []string{
		"nginx-files served 1 KB faster over HTTPS", // it did not
		"caddy-respond answered 28,000",             // generator-limited row
		"in the 100 KB over HTTP test",              // respond is compared on the smallest file only
		"caddy-files served 100 KB faster over HTTPS",
	} {
		if strings.Contains(all, not) {
			t.Errorf("findings claim %q:\n%s", not, all)
		}
	}
}

// A server that used well under its CPUs is named: something else limited
// it; with one run per row the spread says so.
func TestFilesNotCPUBound(t *testing.T) {
	runs := seed003Runs()
	runs[0].cpu = 0.4
	runs[8].cpu = 0.5 // nginx-files, 100 KB over HTTP
	f := filesFile(t, runs)
	r, err := Build(f)
	if err != nil {
		t.Fatal(err)
	}
	if all := strings.Join(r.Findings, "\n"); strings.Contains(all, "starved") {
		t.Errorf("starved without a starved generator:\n%s", all)
	}
	f.Units[3].Steps[1].Result.Generator.Starved = []float64{0.05, 0.45}
	if r, err = Build(f); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Findings, "\n")
	if !strings.Contains(all, "the generator's loop waited for a CPU up to 45% of a run (starved): the machine was busy with other work") {
		t.Errorf("no starved generator in:\n%s", all)
	}
	if !strings.Contains(all, "Not every server was CPU-bound in the file tests (0.40 to 0.98 of 1 server CPU): nginx-files on 1 KB over HTTP (0.40), nginx-files on 100 KB over HTTP (0.50) used less than 85% of its CPUs") ||
		!strings.Contains(all, "30,000 2xx/s with it, 29,950 without (±0%)") ||
		!strings.Contains(all, "With sendfile off, nginx's 100 KB over HTTP fell from 35,000 to 14,000 2xx/s (-60%); per core 70,000 vs 14,286 (not CPU-bound: nginx-files on 100 KB over HTTP at 0.50 of 1 server CPU).") {
		t.Errorf("findings:\n%s", all)
	}
	if got := spreadWords([]float64{100}); got != "one run" {
		t.Errorf("spread of one run: %q", got)
	}
}

// The seeds' file findings beside this run's: per core in every test, the
// sendfile drop, caddy-files faster over HTTPS (and nginx-files not).
func TestFilesSeeds(t *testing.T) {
	r, err := Build(filesFile(t, seed003Runs()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Seeds == nil || len(r.Seeds.Rows) != 4 {
		t.Fatalf("seeds table %+v", r.Seeds)
	}
	want := [][]string{
		{"nginx-files faster per core than caddy-files in 4 of 4 tests, by 1.2x to 5.3x", "yes", "-"},
		{"100 KB over HTTP 35,000 to 14,000 2xx/s (-60%)", "yes", "1.00x the seed's"},
		{"caddy-files 1 KB: 14,000 over HTTPS, 10,000 over HTTP (1.4x)", "yes", "1.00x the seed's"},
		{"nginx-files 1 KB: 20,000 over HTTPS, 30,000 over HTTP (0.7x)", "no", "0.48x the seed's"},
	}
	for i, w := range want {
		row := r.Seeds.Rows[i]
		if got := row[3:]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("seed row %d: %q, want %q", i, got, w)
		}
	}
}
