// Command k8s-check checks what scripts/k8s-e2e.sh's sharded run on
// Kubernetes gave: the shards' results (as `kubectl logs` printed them)
// and `loadlab merge`'s result of them. It reads the JSON itself and
// decodes the histograms with hdrhistogram-go, so that the merge is checked
// by code other than the merge's own.
//
// Usage: k8s-check --shards N --start-at TIME --rate R --duration D
//
//	[--max-late 50ms] [--tolerance 0.01] SHARDS.jsonl MERGED.json
//
// Checks, one line each on stdout ("ok" or "FAIL"), exit 1 if any failed:
//   - N results, one per shard index 0..N-1 (each its own
//     JOB_COMPLETION_INDEX), each of N shards, on distinct pods (host);
//   - every shard started at --start-at: its schedule.start and its first
//     second's at_ms are that time, and that first second holds at least
//     90% of the shard's requests due in it, none with a corrected latency
//     over --max-late. Corrected latency counts from the intended time, and
//     request 0, the shard's first, was due at --start-at: a shard that sent
//     it L late shows at least L there (and one a second late shows an
//     empty first second);
//   - the merged requests (and ok) are the sum of the shards', and
//     requests are rate x (duration - warmup) within --tolerance;
//   - each merged histogram (corrected, ok, uncorrected) is the sum of the
//     shards' histograms, bucket by bucket, exactly.
//
// Imports: a check tool of scripts/k8s-e2e.sh, not part of loadlab's
// commands: none of loadlab's packages; nothing imports it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// result is the part of a gen result (docs/results.md) checked here.
type result struct {
	Host  string `json:"host"`
	Shard *struct {
		Index int `json:"index"`
		Count int `json:"count"`
	} `json:"shard"`
	Schedule *struct {
		Start     time.Time `json:"start"`
		Rate      float64   `json:"rate"`
		DurationS float64   `json:"duration_s"`
		WarmupS   float64   `json:"warmup_s"`
		Shards    int       `json:"shards"`
	} `json:"schedule"`
	Requests   uint64            `json:"requests"`
	OK         uint64            `json:"ok"`
	Histograms map[string]string `json:"histograms"`
	PerSecond  []struct {
		AtMs   int64   `json:"at_ms"`
		DurS   float64 `json:"dur_s"`
		OK     uint64  `json:"ok"`
		Non2xx uint64  `json:"non2xx"`
		Errors uint64  `json:"errors"`
		MaxUs  int64   `json:"max_us"`
	} `json:"per_second"`
	Generator struct {
		LagMaxUs int64 `json:"lag_max_us"`
	} `json:"generator"`
	Interrupted bool `json:"interrupted"`
	Latency     struct {
		P99 int64 `json:"p99"`
	} `json:"latency_us"`
}

var failed bool

func check(ok bool, format string, args ...any) {
	word := "ok  "
	if !ok {
		word, failed = "FAIL", true
	}
	fmt.Printf("%s %s\n", word, fmt.Sprintf(format, args...))
}

func main() {
	shards := flag.Int("shards", 0, "shard count of the run")
	startAt := flag.String("start-at", "", "the Job's --start-at (RFC 3339)")
	rate := flag.Float64("rate", 0, "the whole run's rate (-r), requests/s")
	duration := flag.Duration("duration", 0, "the run's duration (-d)")
	maxLate := flag.Duration("max-late", 50*time.Millisecond, "how late after --start-at a shard may send its first request")
	tolerance := flag.Float64("tolerance", 0.01, "relative tolerance of requests against rate x duration")
	flag.Parse()
	if flag.NArg() != 2 || *shards < 1 || *rate <= 0 || *duration <= 0 {
		fmt.Fprintln(os.Stderr, "usage: k8s-check --shards N --start-at TIME --rate R --duration D SHARDS.jsonl MERGED.json")
		os.Exit(2)
	}
	start, err := time.Parse(time.RFC3339Nano, *startAt)
	if err != nil {
		fatal("--start-at: %v", err)
	}
	parts, err := readResults(flag.Arg(0))
	if err != nil {
		fatal("%s: %v", flag.Arg(0), err)
	}
	merged, err := readResults(flag.Arg(1))
	if err != nil || len(merged) != 1 {
		fatal("%s: want one result (%d, %v)", flag.Arg(1), len(merged), err)
	}
	m := merged[0]

	// One result per shard index, each its pod's own.
	var idx []int
	hosts := map[string]bool{}
	for _, p := range parts {
		if p.Shard == nil || p.Schedule == nil || p.Histograms == nil {
			fatal("%s: a result without shard, schedule or histograms (not a shard's result)", flag.Arg(0))
		}
		idx = append(idx, p.Shard.Index)
		hosts[p.Host] = true
		check(p.Shard.Count == *shards && p.Schedule.Shards == *shards && !p.Interrupted,
			"shard %d/%d on %s: a whole run of %d shards (interrupted: %v)", p.Shard.Index, p.Shard.Count, p.Host, *shards, p.Interrupted)
	}
	slices.Sort(idx)
	want := make([]int, *shards)
	for i := range want {
		want[i] = i
	}
	check(slices.Equal(idx, want) && len(hosts) == *shards, "%d results with shard indexes %v from %d distinct pods (want %v)", len(parts), idx, len(hosts), want)

	// Every shard began at the shared start time.
	for _, p := range parts {
		if len(p.PerSecond) == 0 {
			check(false, "shard %d: no per-second entries", p.Shard.Index)
			continue
		}
		s0 := p.PerSecond[0]
		done := s0.OK + s0.Non2xx + s0.Errors
		due := *rate / float64(*shards) // this shard's requests due in the first second
		late := time.Duration(s0.MaxUs) * time.Microsecond
		check(p.Schedule.Start.Equal(start) && s0.AtMs == start.UnixMilli() && s0.DurS == 1 && float64(done) >= 0.9*due && late <= *maxLate,
			"shard %d started within %v of --start-at %s: schedule.start %s, first second at %d ms (want %d): %d requests done of %.0f due, largest corrected latency %v (send lag over the run: max %v)",
			p.Shard.Index, *maxLate, start.UTC().Format(time.RFC3339Nano), p.Schedule.Start.UTC().Format(time.RFC3339Nano), s0.AtMs, start.UnixMilli(),
			done, due, late, time.Duration(p.Generator.LagMaxUs)*time.Microsecond)
	}

	// Counts: the merged ones are the shards' sums, and the rate asked for.
	var sumReq, sumOK uint64
	for _, p := range parts {
		sumReq += p.Requests
		sumOK += p.OK
	}
	check(m.Requests == sumReq && m.OK == sumOK, "merged requests %d = sum of the shards' %d; ok %d = %d", m.Requests, sumReq, m.OK, sumOK)
	warmup := 0.0
	if m.Schedule != nil {
		warmup = m.Schedule.WarmupS
	}
	expect := *rate * (duration.Seconds() - warmup)
	dev := math.Abs(float64(m.Requests)-expect) / expect
	check(dev <= *tolerance, "merged requests %d vs rate x duration %.0f/s x %.0f s = %.0f: off by %.3f%% (<= %.1f%%)",
		m.Requests, *rate, duration.Seconds()-warmup, expect, 100*dev, 100**tolerance)

	// Histograms: the merged one is the shards' sum, bucket by bucket.
	for _, kind := range []string{"corrected", "ok", "uncorrected"} {
		sum, total, err := sumCounts(parts, kind)
		if err != nil {
			check(false, "histogram %s: %v", kind, err)
			continue
		}
		got, err := decode(m.Histograms[kind])
		if err != nil {
			check(false, "merged histogram %s: %v", kind, err)
			continue
		}
		same := got.LowestTrackableValue == sum.LowestTrackableValue && got.SignificantFigures == sum.SignificantFigures &&
			slices.Equal(trim(got.Counts), trim(sum.Counts))
		check(same, "merged %s histogram = sum of the shards' bucket by bucket (%d values, %d buckets in use)", kind, total, inUse(sum.Counts))
	}
	if failed {
		os.Exit(1)
	}
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "k8s-check: "+format+"\n", args...)
	os.Exit(2)
}

// readResults reads one JSON result after another (kubectl logs prints
// each shard's in turn).
func readResults(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	var out []result
	for {
		var r result
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("result %d: %w", len(out)+1, err)
		}
		out = append(out, r)
	}
}

func decode(s string) (*hdr.Snapshot, error) {
	if s == "" {
		return nil, errors.New("missing")
	}
	h, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, err
	}
	return h.Export(), nil
}

// sumCounts adds the shards' histograms of one kind count by count: they
// must share the lowest value and precision, which fix every bucket's
// index (the highest value only sets how many buckets there are).
func sumCounts(parts []result, kind string) (*hdr.Snapshot, int64, error) {
	var sum *hdr.Snapshot
	var total int64
	for _, p := range parts {
		s, err := decode(p.Histograms[kind])
		if err != nil {
			return nil, 0, fmt.Errorf("shard %d: %w", p.Shard.Index, err)
		}
		if sum == nil {
			sum = &hdr.Snapshot{LowestTrackableValue: s.LowestTrackableValue, SignificantFigures: s.SignificantFigures}
		}
		if s.LowestTrackableValue != sum.LowestTrackableValue || s.SignificantFigures != sum.SignificantFigures {
			return nil, 0, fmt.Errorf("shard %d: lowest value %d and %d significant figures, the others %d and %d",
				p.Shard.Index, s.LowestTrackableValue, s.SignificantFigures, sum.LowestTrackableValue, sum.SignificantFigures)
		}
		for len(sum.Counts) < len(s.Counts) {
			sum.Counts = append(sum.Counts, 0)
		}
		for i, c := range s.Counts {
			sum.Counts[i] += c
			total += c
		}
	}
	return sum, total, nil
}

func trim(c []int64) []int64 {
	for len(c) > 0 && c[len(c)-1] == 0 {
		c = c[:len(c)-1]
	}
	return c
}

func inUse(c []int64) int {
	n := 0
	for _, v := range c {
		if v != 0 {
			n++
		}
	}
	return n
}
