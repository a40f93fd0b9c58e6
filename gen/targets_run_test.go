package gen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"
)

// targetCounter is a handler that counts each request by what arrived:
// method, path and query, Host, the X-T header and the body.
type targetCounter struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *targetCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	key := strings.Join([]string{r.Method, r.URL.RequestURI(), r.Host, r.Header.Get("X-T"), string(b)}, " ")
	c.mu.Lock()
	if c.seen == nil {
		c.seen = map[string]int{}
	}
	c.seen[key]++
	c.mu.Unlock()
	w.Write([]byte("ok"))
}

// testTargets are three requests to one host:port, told apart by method,
// path, Host header, X-T header and body.
func testTargets(base string) ([]Request, []string) {
	ts := []Request{
		{Method: "GET", URL: base + "a?x=1", Headers: []string{"Host: a.example", "X-T: a"}},
		{Method: "POST", URL: base + "b", Headers: []string{"X-T: b"}, Body: []byte("bee")},
		{Method: "GET", URL: base + "c", Headers: []string{"Host: c.example"}},
	}
	host := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(base, "http://"), "https://"), "/")
	keys := []string{"GET /a?x=1 a.example a ", "POST /b " + host + " b bee", "GET /c c.example run "}
	return ts, keys
}

// checkTargets compares what the server saw and what the result says with
// the exact count each target is owed.
func checkTargets(t *testing.T, res *result.Result, srv *targetCounter, keys []string, want []uint64) {
	t.Helper()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	var total uint64
	for i, k := range keys {
		if got := uint64(srv.seen[k]); got != want[i] {
			t.Errorf("target %d: the server saw %d of %q, want %d (all it saw: %v)", i+1, got, k, want[i], srv.seen)
		}
		total += want[i]
	}
	if len(srv.seen) != len(keys) {
		t.Errorf("the server saw %d kinds of request, want %d: %v", len(srv.seen), len(keys), srv.seen)
	}
	if res.Requests != total || res.OK != total {
		t.Errorf("result: requests %d ok %d, want %d", res.Requests, res.OK, total)
	}
	if len(res.Targets) != len(keys) {
		t.Fatalf("result targets %+v, want %d", res.Targets, len(keys))
	}
	var sum uint64
	for i, tr := range res.Targets {
		if tr.Requests != want[i] || tr.OK != want[i] || tr.Errors != 0 || tr.Non2xx != 0 {
			t.Errorf("result target %d %s %s: requests %d ok %d errors %d, want %d ok", i+1, tr.Method, tr.URL, tr.Requests, tr.OK, tr.Errors, want[i])
		}
		if tr.Latency.P50 <= 0 || tr.Latency.Max < tr.Latency.P99 {
			t.Errorf("result target %d: latency %+v", i+1, tr.Latency)
		}
		sum += tr.Requests
	}
	if sum != res.Requests {
		t.Errorf("targets add up to %d requests, the totals say %d", sum, res.Requests)
	}
}

// TestTargetsWeightedClosedLoop: 700 requests over weights 5,1,1 go 500,
// 100, 100 (the loops' k-th requests are global requests j, and the
// weighted table repeats every 7), each with its own method, Host, headers
// and body; the run's own -H header goes with every target unless one has
// its own of that name.
func TestTargetsWeightedClosedLoop(t *testing.T) {
	t.Parallel()
	srv := &targetCounter{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ts, keys := testTargets(hs.URL + "/")
	cfg := Config{Targets: ts, TargetWeights: []int{5, 1, 1}, Headers: []string{"X-T: run"}, Connections: 4,
		Requests: 700, Duration: 20 * time.Second, Timeout: 5 * time.Second}
	res := runLogged(t, cfg)
	checkTargets(t, res, srv, keys, []uint64{500, 100, 100})
	if res.Target != ts[0].URL {
		t.Errorf("result target %q, want the first target's URL", res.Target)
	}
	if res.Targets[0].Weight != 5 {
		t.Errorf("weight %d, want 5", res.Targets[0].Weight)
	}
}

// TestTargetsRoundRobinOpenLoopH2: the same over HTTP/2 in open loop: 1,000
// requests due in 1 s at 1,000/s go round-robin, 334, 333, 333.
func TestTargetsRoundRobinOpenLoopH2(t *testing.T) {
	t.Parallel()
	srv := &targetCounter{}
	hs := testutil.StartH2Server(t, srv, testutil.H2Options{})
	ts, keys := testTargets(hs.URL)
	cfg := h2Config(hs, "/")
	cfg.URL = ""
	cfg.Targets, cfg.Headers, cfg.Rate, cfg.Duration = ts, []string{"X-T: run"}, 1000, time.Second
	res := runLogged(t, cfg)
	checkTargets(t, res, srv, keys, []uint64{334, 333, 333})
}

// TestStagedTargetsShardsMerge: two shards of one staged run with three
// targets, started together, each send their half of the schedule; merged,
// they are the whole run: 900 requests (stages 1s:600,1s:600 offer 300 +
// 600), 300 per target round-robin, per second offered 300 and 600, the
// stages kept. Shards whose stages differ do not merge.
func TestStagedTargetsShardsMerge(t *testing.T) {
	t.Parallel()
	srv := &targetCounter{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ts, keys := testTargets(hs.URL + "/")
	st, _ := ParseStages("1s:600,1s:600")
	at := time.Now().Add(400 * time.Millisecond)
	res := make([]*result.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range res {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := Config{Targets: ts, Headers: []string{"X-T: run"}, Stages: st, Connections: 8, Timeout: 5 * time.Second,
				Shard: Shard{Index: i, Count: 2}, StartAt: at, StartTolerance: 300 * time.Millisecond}
			res[i], errs[i] = Run(context.Background(), cfg)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	if res[0].Requests != 450 || res[1].Requests != 450 {
		t.Fatalf("shards sent %d and %d requests, want 450 each", res[0].Requests, res[1].Requests)
	}
	m, err := mergeShards(t, res...)
	if err != nil {
		t.Fatal(err)
	}
	checkTargets(t, m, srv, keys, []uint64{300, 300, 300})
	if len(m.Stages) != 2 || m.RequestedRate != 450 {
		t.Errorf("merged stages %+v requested_rate %v, want the stages and 900/2 s", m.Stages, m.RequestedRate)
	}
	for i, want := range []float64{300, 600} {
		if i >= len(m.Seconds) || m.Seconds[i].Offered == nil || *m.Seconds[i].Offered != want {
			t.Errorf("merged per_second[%d].offered: want %v (%+v)", i, want, m.Seconds)
		}
	}
	other := *res[1]
	other.Stages = []result.StageInfo{{DurationS: 2, Rate: 600}}
	if _, err := mergeShards(t, res[0], &other); err == nil || !strings.Contains(err.Error(), "stages") {
		t.Errorf("shards with other stages merged: %v", err)
	}
}

// TestTargetsHEAD: a HEAD target's response has headers only (its
// Content-Length says what a GET would get), a GET target's has the body:
// over one connection, alternating, each response ends where it should
// (no timeouts waiting for a HEAD's body, no GET body left over as bytes
// nobody asked for), whichever comes first in the file.
func TestTargetsHEAD(t *testing.T) {
	t.Parallel()
	srv := &targetCounter{}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	head, get := Request{Method: "HEAD", URL: hs.URL + "/h"}, Request{Method: "GET", URL: hs.URL + "/g"}
	for _, ts := range [][]Request{{head, get}, {get, head}} {
		cfg := Config{Targets: ts, Connections: 1, Requests: 40, Duration: 10 * time.Second, Timeout: time.Second}
		res := runLogged(t, cfg)
		if res.OK != 40 || res.Targets[0].OK != 20 || res.Targets[1].OK != 20 || res.Generator.Unsolicited != 0 {
			t.Errorf("%s first: ok %d, targets %+v, unsolicited %d, errors %v: want 20 HEAD and 20 GET answered, nothing left over",
				ts[0].Method, res.OK, res.Targets, res.Generator.Unsolicited, res.ErrorSamples)
		}
	}
}

// mergeShards merges the results of a run's shards as loadlab merge does,
// each read back from its JSON.
func mergeShards(t *testing.T, rs ...*result.Result) (*result.Result, error) {
	t.Helper()
	var m result.Merger
	for i, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		read, err := result.ReadResults(fmt.Sprintf("shard%d.json", i), b)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range read {
			if err := m.Add(fmt.Sprintf("shard%d.json", i), r); err != nil {
				return nil, err
			}
		}
	}
	return m.Result()
}
