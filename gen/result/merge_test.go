package result

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/loadlab/loadlab/internal/fields"
)

var testStart = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// shardSet is one recorded run split over shards: what each shard would
// have recorded, and the whole run as one generator would have.
type shardSet struct {
	whole, wholeU *hdr.Histogram
	wholeSec      []*hdr.Histogram
	shards        []*Result
}

// splitRun records n latencies (µs, spread over four orders of magnitude,
// with a slow tail) into one histogram for the whole run and the same
// values, each assigned to a random shard and second, into per-shard and
// per-second histograms, and returns the shards as results.
func splitRun(t *testing.T, seed uint64, n, nshards, secs int) shardSet {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	set := shardSet{whole: newHist(), wholeU: newHist()}
	type acc struct {
		c, u *hdr.Histogram
		sec  []*hdr.Histogram
		cnt  []uint64
	}
	accs := make([]acc, nshards)
	for i := range accs {
		accs[i] = acc{c: newHist(), u: newHist(), sec: make([]*hdr.Histogram, secs), cnt: make([]uint64, secs)}
		for s := range accs[i].sec {
			accs[i].sec[s] = newHist()
		}
	}
	for s := 0; s < secs; s++ {
		set.wholeSec = append(set.wholeSec, newHist())
	}
	for k := 0; k < n; k++ {
		v := int64(math.Exp(rng.Float64()*9.2)) + 50 // 51 µs .. ~500 ms
		if rng.IntN(1000) == 0 {
			v = 2_000_000 + rng.Int64N(20_000_000) // the slow tail
		}
		u := max(1, v/2)
		sh, sec := rng.IntN(nshards), rng.IntN(secs)
		a := &accs[sh]
		record(a.c, v)
		record(a.u, u)
		record(a.sec[sec], v)
		a.cnt[sec]++
		record(set.whole, v)
		record(set.wholeU, u)
		record(set.wholeSec[sec], v)
	}
	for i, a := range accs {
		r := &Result{
			Target: "http://127.0.0.1:8080/1k", Protocol: "http/1.1", Mode: "open",
			Connections: share(50, i, nshards), DurationS: float64(secs), RequestedRate: 1000.0 / float64(nshards),
			AchievedRate: float64(a.c.TotalCount()) / float64(secs), Requests: uint64(a.c.TotalCount()), OK: uint64(a.c.TotalCount()),
			Status: map[string]uint64{"200": uint64(a.c.TotalCount())}, Errors: map[string]uint64{"timeout": 0},
			Latency: LatencyOf(a.c), LatencyUncorrected: LatencyOf(a.u),
			Generator: Generator{CPUs: []int{1}, Loops: 1, Busy: []float64{0.2}, Reason: ""},
		}
		r.Shard = &ShardInfo{Index: i, Count: nshards}
		r.Host = fmt.Sprintf("host-%d", i)
		r.Schedule = &ScheduleInfo{Start: testStart, Rate: 1000, DurationS: float64(secs), Connections: 50, Shards: nshards}
		enc := func(h *hdr.Histogram) string {
			s, err := EncodeHist(h)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		r.Histograms = &EncodedHistograms{Corrected: enc(a.c), OK: enc(a.c), Uncorrected: enc(a.u)}
		for s := 0; s < secs; s++ {
			r.Seconds = append(r.Seconds, Second{T: s, OK: a.cnt[s], P99us: a.sec[s].ValueAtQuantile(99),
				AtMs: testStart.Add(time.Duration(s) * time.Second).UnixMilli(), Hist: enc(a.sec[s])})
		}
		set.shards = append(set.shards, r)
	}
	return set
}

// asLogs returns the results as `kubectl logs` prints a Job's pods: each
// pod's indented JSON result, one after the other.
func asLogs(t *testing.T, rs []*Result) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, r := range rs {
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func mergeAll(t *testing.T, rs []*Result) (*Result, error) {
	t.Helper()
	var m Merger
	for i, r := range rs {
		if err := m.Add(fmt.Sprintf("shard%d.json", i), r); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

// percentiles every one of which must match between merged and whole.
func checkPercentiles(t *testing.T, what string, got, want *hdr.Histogram) {
	t.Helper()
	if got.TotalCount() != want.TotalCount() {
		t.Fatalf("%s: merged total %d, whole run %d", what, got.TotalCount(), want.TotalCount())
	}
	for q := 0.0; q <= 100; q += 0.05 {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Fatalf("%s: p%g merged %d µs, whole run %d µs", what, q, g, w)
		}
	}
	for _, q := range []float64{99.9, 99.99, 99.999, 100} {
		if g, w := got.ValueAtQuantile(q), want.ValueAtQuantile(q); g != w {
			t.Fatalf("%s: p%g merged %d µs, whole run %d µs", what, q, g, w)
		}
	}
	if got.Max() != want.Max() || got.Min() != want.Min() || got.Mean() != want.Mean() {
		t.Fatalf("%s: merged min/max/mean %d/%d/%g, whole run %d/%d/%g", what, got.Min(), got.Max(), got.Mean(), want.Min(), want.Max(), want.Mean())
	}
}

// TestMergeIsExact: one set of recorded values split over N shards, the
// shards' JSON results read back as kubectl logs prints them and merged,
// gives every percentile and the total of the whole run's histogram, and
// each second's p99 of the whole run's per-second histograms.
func TestMergeIsExact(t *testing.T) {
	for _, n := range []int{1, 2, 4, 7} {
		t.Run(fmt.Sprintf("shards=%d", n), func(t *testing.T) {
			set := splitRun(t, uint64(n), 60_000, n, 5)
			rs, err := ReadResults("shards.jsonl", asLogs(t, set.shards))
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != n {
				t.Fatalf("read %d results, wrote %d", len(rs), n)
			}
			// Merge in reverse order: the order of the inputs is not the
			// order of the shards.
			for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
				rs[i], rs[j] = rs[j], rs[i]
			}
			m, err := mergeAll(t, rs)
			if err != nil {
				t.Fatal(err)
			}
			checkPercentiles(t, "corrected", m.CorrectedHist, set.whole)
			checkPercentiles(t, "uncorrected", m.UncorrectedHist, set.wholeU)
			if m.Latency != LatencyOf(set.whole) || m.Latency2xx != LatencyOf(set.whole) || m.LatencyUncorrected != LatencyOf(set.wholeU) {
				t.Fatalf("latency %+v / %+v, whole run %+v / %+v", m.Latency, m.LatencyUncorrected, LatencyOf(set.whole), LatencyOf(set.wholeU))
			}
			if m.Requests != uint64(set.whole.TotalCount()) || m.Status["200"] != m.Requests {
				t.Fatalf("requests %d (200: %d), whole run %d", m.Requests, m.Status["200"], set.whole.TotalCount())
			}
			if m.Connections != 50 || m.RequestedRate != 1000 {
				t.Fatalf("connections %d, requested rate %g: want the whole run's 50 and 1000", m.Connections, m.RequestedRate)
			}
			if len(m.Seconds) != len(set.wholeSec) {
				t.Fatalf("%d merged seconds, the run has %d", len(m.Seconds), len(set.wholeSec))
			}
			for s, ps := range m.Seconds {
				w := set.wholeSec[s]
				if ps.T != s || ps.OK != uint64(w.TotalCount()) || ps.P99us != w.ValueAtQuantile(99) || ps.Maxus != w.Max() {
					t.Fatalf("second %d: t %d, ok %d, p99 %d µs; whole run ok %d p99 %d µs", s, ps.T, ps.OK, ps.P99us, w.TotalCount(), w.ValueAtQuantile(99))
				}
				if want := testStart.Add(time.Duration(s) * time.Second).UnixMilli(); ps.AtMs != want {
					t.Fatalf("second %d at %d ms, want %d", s, ps.AtMs, want)
				}
			}
			if len(m.Shards) != n || m.Shards[0].Shard.Index != 0 || m.Shards[n-1].Host != fmt.Sprintf("host-%d", n-1) {
				t.Fatalf("shard list %+v", m.Shards)
			}
			// The merged JSON is itself a mergeable result: read back, its
			// histogram is still the whole run's.
			again, err := ReadResults("merged.json", asLogs(t, []*Result{m}))
			if err != nil {
				t.Fatal(err)
			}
			h, err := DecodeHist(again[0].Histograms.Corrected)
			if err != nil {
				t.Fatal(err)
			}
			checkPercentiles(t, "merged JSON", h, set.whole)
		})
	}
}

// TestMergeOfMerges: merging the merged halves of a run equals merging
// its shards.
func TestMergeOfMerges(t *testing.T) {
	set := splitRun(t, 9, 20_000, 4, 3)
	a, err := mergeAll(t, set.shards[:2])
	if err == nil {
		t.Fatalf("a merge of 2 of 4 shards succeeded without Partial: %+v", a.Shards)
	}
	var m1, m2 Merger
	m1.Partial, m2.Partial = true, true
	for i, r := range set.shards {
		m := &m1
		if i%2 == 1 {
			m = &m2
		}
		if err := m.Add(fmt.Sprint(i), r); err != nil {
			t.Fatal(err)
		}
	}
	h1, err := m1.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(h1.Generator.Notes, ";"), "partial merge: shard 1/4, 3/4 missing") {
		t.Fatalf("partial merge notes %q", h1.Generator.Notes)
	}
	h2, _ := m2.Result()
	all, err := mergeAll(t, asResults(t, h1, h2))
	if err != nil {
		t.Fatal(err)
	}
	checkPercentiles(t, "merge of merges", all.CorrectedHist, set.whole)
	if len(all.Shards) != 4 || all.Shards[1].Shard.Index != 1 {
		t.Fatalf("shards %+v", all.Shards)
	}
}

// asResults round-trips results through JSON, as files would.
func asResults(t *testing.T, rs ...*Result) []*Result {
	t.Helper()
	out, err := ReadResults("x", asLogs(t, rs))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMergeVerdictNamesTheShard(t *testing.T) {
	set := splitRun(t, 3, 1000, 4, 2)
	set.shards[2].Generator.Bottleneck = true
	set.shards[2].Generator.Reason = "loop 0 (cpu 1) was 97% busy"
	m, err := mergeAll(t, set.shards)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Generator.Bottleneck || m.Generator.Reason != "shard 2/4 on host-2: loop 0 (cpu 1) was 97% busy" {
		t.Fatalf("merged verdict %v %q", m.Generator.Bottleneck, m.Generator.Reason)
	}
	for i, s := range m.Shards {
		if s.Generator.Bottleneck != (i == 2) {
			t.Fatalf("shard %d kept verdict %v", i, s.Generator.Bottleneck)
		}
	}
	healthy, _ := mergeAll(t, splitRun(t, 3, 1000, 4, 2).shards)
	if healthy.Generator.Bottleneck || healthy.Generator.Reason != "" {
		t.Fatalf("healthy shards merged into a bottleneck: %q", healthy.Generator.Reason)
	}
}

// TestMergeRefuses: results that are not the shards of one run are
// refused with a one-line reason.
func TestMergeRefuses(t *testing.T) {
	fresh := func() []*Result { return splitRun(t, 5, 2000, 4, 2).shards }
	cases := map[string]struct {
		edit func(rs []*Result) []*Result
		want string
	}{
		"overlap": {func(rs []*Result) []*Result { rs[3].Shard.Index = 1; return rs }, "both hold shard 1/4"},
		"count": {func(rs []*Result) []*Result {
			rs[1].Shard.Count = 3
			rs[1].Schedule.Shards = 3
			return rs
		}, "shard count 4 vs 3"},
		"mode": {func(rs []*Result) []*Result {
			rs[1].Mode = "closed"
			return rs
		}, "shard0.json and shard1.json are not shards of one run: mode open loop vs closed loop"},
		"target":   {func(rs []*Result) []*Result { rs[2].Target = "http://127.0.0.1:9/"; return rs }, "target http://127.0.0.1:8080/1k vs http://127.0.0.1:9/"},
		"rate":     {func(rs []*Result) []*Result { rs[2].Schedule.Rate = 2000; return rs }, "schedule rate 1000/s vs 2000/s"},
		"duration": {func(rs []*Result) []*Result { rs[2].Schedule.DurationS = 3; return rs }, "schedule duration 2s vs 3s"},
		"skew": {func(rs []*Result) []*Result {
			rs[3].Schedule.Start = testStart.Add(450 * time.Millisecond)
			return rs
		}, "started 450ms apart (more than 400ms)"},
		"missing":      {func(rs []*Result) []*Result { return rs[:3] }, "shard 3/4 missing (3 of 4 given)"},
		"damaged":      {func(rs []*Result) []*Result { rs[0].Histograms.Corrected = "HISTFAAAA!!"; return rs }, "corrected histogram"},
		"nohist":       {func(rs []*Result) []*Result { rs[0].Histograms = nil; return rs }, "carries no latency histograms"},
		"inconsistent": {func(rs []*Result) []*Result { rs[0].Schedule.Shards = 2; return rs }, "its schedule says 2 shards"},
		"nothing":      {func(rs []*Result) []*Result { return nil }, "nothing to merge"},
		"streams":      {func(rs []*Result) []*Result { rs[2].Streams = 5; return rs }, "streams per connection 0 vs 5"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := mergeAll(t, c.edit(asResults(t, fresh()...)))
			if err == nil || !fields.IsUsage(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want a one-line usage error containing %q", err, c.want)
			}
		})
	}
	// A skew within MaxStartSkew is one run; the merged schedule says how
	// far apart the shards started and aligns their seconds.
	rs := fresh()
	rs[1].Schedule.Start = testStart.Add(30 * time.Millisecond)
	m, err := mergeAll(t, rs)
	if err != nil {
		t.Fatal(err)
	}
	if m.Schedule.StartSkewMs != 30 || !m.Schedule.Start.Equal(testStart) || len(m.Seconds) != 2 {
		t.Fatalf("skewed merge: schedule %+v, %d seconds", m.Schedule, len(m.Seconds))
	}
}

func TestReadResultsErrors(t *testing.T) {
	good := asLogs(t, splitRun(t, 1, 100, 2, 1).shards)
	cases := map[string]struct {
		in   string
		want string
	}{
		"failed shard": {string(good) + "loadlab: start time 2026-05-01T12:00:00Z is 3s in the past\n", `shards.jsonl:`},
		"empty":        {"\n\n", "no results in it"},
		"not result":   {`{"kind": "Job"}`, "not a gen result"},
		"bad json":     {"{\n \"target\": \n}", "shards.jsonl:3: bad JSON result"},
		"text":         {"hello world", `shards.jsonl:1: not a gen result: "hello world"`},
	}
	for name, c := range cases {
		_, err := ReadResults("shards.jsonl", []byte(c.in))
		if err == nil || !fields.IsUsage(err) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want a one-line usage error containing %q", name, err, c.want)
		}
	}
	_, err := ReadResults("shards.jsonl", []byte(string(good)+"loadlab: start time is 3s in the past\n"))
	if want := fmt.Sprintf("shards.jsonl:%d: not a gen result: \"loadlab: start time is 3s in the past\"", bytes.Count(good, []byte("\n"))+1); err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	// One result per line (JSON Lines) reads as well as indented ones.
	var lines bytes.Buffer
	for _, r := range splitRun(t, 1, 100, 3, 1).shards {
		b, _ := json.Marshal(r)
		lines.Write(b)
		lines.WriteByte('\n')
	}
	if rs, err := ReadResults("x", lines.Bytes()); err != nil || len(rs) != 3 {
		t.Fatalf("JSON lines: %d results, %v", len(rs), err)
	}
}

// writeHdrLog writes hists as gen --hdr-log does: one interval per second
// from start.
func writeHdrLog(t *testing.T, start time.Time, hists []*hdr.Histogram) []byte {
	t.Helper()
	var b bytes.Buffer
	w := hdr.NewHistogramLogWriter(&b)
	w.OutputLogFormatVersion()
	w.OutputComment("[loadlab corrected latency, microseconds, one interval per second]")
	ms := start.UnixMilli()
	w.OutputStartTime(ms)
	w.OutputBaseTime(ms)
	w.SetBaseTime(ms)
	w.OutputLegend()
	for i, h := range hists {
		s := start.Add(time.Duration(i) * time.Second)
		h.SetStartTimeMs(s.UnixMilli())
		h.SetEndTimeMs(s.Add(time.Second).UnixMilli())
		if err := w.OutputIntervalHistogram(h); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// TestMergeHdrLogs: the interval logs of the shards merge to the whole
// run's histogram, second by second.
func TestMergeHdrLogs(t *testing.T) {
	set := splitRun(t, 11, 30_000, 3, 4)
	var m Merger
	for i, r := range set.shards {
		var hists []*hdr.Histogram
		for _, ps := range r.Seconds {
			h, _ := DecodeHist(ps.Hist)
			hists = append(hists, h)
		}
		lr, err := ReadHdrLog(fmt.Sprintf("s%d.hlog", i), writeHdrLog(t, testStart, hists))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(fmt.Sprintf("s%d.hlog", i), lr); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add("r.json", set.shards[0]); err == nil || !strings.Contains(err.Error(), "merges only with other logs") {
		t.Fatalf("a JSON result merged with logs: %v", err)
	}
	out, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	checkPercentiles(t, "logs", out.CorrectedHist, set.whole)
	for s, ps := range out.Seconds {
		if ps.P99us != set.wholeSec[s].ValueAtQuantile(99) {
			t.Fatalf("second %d p99 %d, whole run %d", s, ps.P99us, set.wholeSec[s].ValueAtQuantile(99))
		}
	}
	if _, err := ReadHdrLog("x.hlog", []byte("#[StartTime: 12]\nnot an interval\n")); err == nil || !fields.IsUsage(err) {
		t.Fatalf("garbage log: %v", err)
	}
}

func FuzzReadResults(f *testing.F) {
	f.Add([]byte(`{"target":"http://x/","mode":"open","histograms":{"corrected":"HISTFAAAACh4nJNpmSzMwMDAxQABzFCaEUzOmLLsMIQFAEkbA1w="}}`))
	f.Add([]byte("{}\n{}"))
	f.Add([]byte("loadlab: boom\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := ReadResults("f", data)
		if err != nil {
			if !fields.IsUsage(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not a one-line usage error: %v", err)
			}
			return
		}
		var m Merger
		m.Partial = true
		for _, r := range rs {
			if m.Add("f", r) != nil {
				return
			}
		}
		if _, err := m.Result(); err != nil && !fields.IsUsage(err) {
			t.Fatalf("merge: %v", err)
		}
	})
}

func FuzzReadHdrLog(f *testing.F) {
	f.Add([]byte("#[StartTime: 1714564800.000 (seconds since epoch)]\n0.000,1.000,0.5,HISTFAAAACh4nJNpmSzMwMDAxQABzFCaEUzOmLLsMIQFAEkbA1w=\n"))
	f.Add([]byte("Tag=x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ReadHdrLog("f", data); err != nil && (!fields.IsUsage(err) || strings.Contains(err.Error(), "\n")) {
			t.Fatalf("not a one-line usage error: %v", err)
		}
	})
}

func TestMergedText(t *testing.T) {
	set := splitRun(t, 4, 1000, 2, 2)
	set.shards[1].Generator.Bottleneck = true
	set.shards[1].Generator.Reason = "loop 0 (cpu 1) was 97% busy"
	var one bytes.Buffer
	set.shards[1].WriteText(&one)
	if !strings.Contains(one.String(), "shard     1/2 on host-1, schedule start 2026-05-01T12:00:00Z") {
		t.Fatalf("shard text:\n%s", one.String())
	}
	m, err := mergeAll(t, set.shards)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	m.WriteText(&b)
	for _, want := range []string{"merged 2 shards, schedule start 2026-05-01T12:00:00Z", "host-0", "BOTTLENECK: loop 0 (cpu 1) was 97% busy",
		"WARNING   the generator may have been the bottleneck: shard 1/2 on host-1: loop 0"} {
		if !strings.Contains(b.String(), want) {
			t.Fatalf("merged text lacks %q:\n%s", want, b.String())
		}
	}
}

// HTTP/2 shards: the streams per connection are the run's, the h2 counts
// add up and the server's stream limit is the lowest any shard saw.
func TestMergeH2(t *testing.T) {
	rs := splitRun(t, 9, 1000, 3, 2).shards
	for i, r := range rs {
		r.Protocol, r.Streams = "h2", 10
		r.H2 = &H2Info{GoAways: uint64(i + 1), Refused: 2, ResetCodes: map[string]uint64{"INTERNAL_ERROR": 1},
			GoAwayCodes: map[string]uint64{"NO_ERROR": uint64(i + 1)}}
	}
	rs[1].H2.ServerMaxStreams = 8
	rs[2].H2.ServerMaxStreams = 4
	rs[2].H2.ResetCodes["CANCEL"] = 3
	m, err := mergeAll(t, asResults(t, rs...))
	if err != nil {
		t.Fatal(err)
	}
	h := m.H2
	if m.Protocol != "h2" || m.Streams != 10 || h == nil || h.GoAways != 6 || h.Refused != 6 || h.ServerMaxStreams != 4 ||
		h.ResetCodes["INTERNAL_ERROR"] != 3 || h.ResetCodes["CANCEL"] != 3 || h.GoAwayCodes["NO_ERROR"] != 6 {
		t.Fatalf("merged protocol %s streams %d h2 %+v", m.Protocol, m.Streams, h)
	}
}

// newHist is a latency histogram as a run keeps one: 1 µs to 60 s at 3
// significant figures.
func newHist() *hdr.Histogram { return hdr.New(1, 60_000_000, 3) }

// record adds v (µs) to h, clamped into its range, as a run records.
func record(h *hdr.Histogram, v int64) {
	h.RecordValue(min(max(v, 1), h.HighestTrackableValue())) //nolint:errcheck // in range
}

// share is part i of total split into n parts that differ by at most one,
// the larger to the lowest indexes, as shards share connections.
func share(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}
