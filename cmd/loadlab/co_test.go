package main

import (
	"context"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
)

// TestCoordinatedOmission checks the heart of the measurement: a backend that
// stalls 2 s every 5 s, driven at 200 req/s for 10 s over 10 connections.
//
// Expected distribution: the backend's stall windows are [5,7) and [10,12) s
// after it starts; the run starts d after the backend (a few ms; more on a
// busy machine: d is measured from the schedule's start), so it sees the
// first window whole, at [5-d, 7-d). Every request intended during it
// (400 of the 2,000, i.e. 20%) is answered when the window ends, so its
// latency from its intended time is spread evenly over (0, 2] s, plus the
// time the queue takes to drain after it (the rate is kept low so that this
// stays a few ms even on a busy machine). Requests intended in the last d of
// the run meet the second window and wait ~2 s too.
//
//   - p90 is the top 10% of all requests: the 200d late ones (each above
//     2-d) and the top 200-200d of the 400 spread over (0, 2]: 1.0 s + d
//     (bounds 0.9..1.1 s + d; for d < 0.5 s, the late ones above it).
//   - p99 is the top 1% = the top 5% of the stalled ones: 1.9 s, raised a
//     little by the d x 200 late ones at ~2 s (bounds 1.85..2.05 s).
//   - every one of the 2,000 due requests is answered: requests equals
//     rate x duration, no drops (the pending queue holds 1,000).
//
// Uncorrected latency is measured from the actual write. Only the requests
// already written when the stall began (one per connection, 10; over
// HTTP/2 one per stream: 2 connections x 5 streams) wait long; the ~400
// queued behind busy connections (streams) are written after the stall and
// answered at once. So 0.5% of requests are slow from the write: the
// uncorrected p99 stays in the fast mode (below 100 ms), which is exactly
// the coordinated-omission error.
func TestCoordinatedOmission(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s runs")
	}
	for _, tc := range []struct {
		name           string
		h2             bool
		conns, streams int
	}{{"http1", false, 10, 0}, {"h2", true, 2, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			// Side by side: 200 requests/s each is light work, and the
			// latencies judged are the stalls' seconds.
			t.Parallel()
			coordinatedOmission(t, tc.h2, tc.conns, tc.streams)
		})
	}
}

func coordinatedOmission(t *testing.T, h2 bool, conns, streams int) {
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0", H2: h2, StallEvery: 5 * time.Second, StallFor: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := gen.Run(context.Background(), gen.Config{
		URL:         "http://" + srv.Addr() + "/1k",
		Rate:        200,
		Duration:    10 * time.Second,
		Connections: conns,
		HTTP2:       h2,
		Streams:     streams,
		Timeout:     3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[bool]string{false: "http/1.1", true: "h2"}[h2]; res.Protocol != want || res.Streams != streams {
		t.Fatalf("protocol %s streams %d, want %s with %d", res.Protocol, res.Streams, want, streams)
	}
	c, u := res.Latency, res.LatencyUncorrected
	t.Logf("corrected p50 %d p90 %d p99 %d max %d µs; uncorrected p50 %d p99 %d max %d µs; requests %d ok %d",
		c.P50, c.P90, c.P99, c.Max, u.P50, u.P99, u.Max, res.Requests, res.OK)
	if res.Requests != 2000 || res.OK != 2000 || res.ErrorCount() != 0 {
		t.Fatalf("requests %d ok %d errors %v: want all 2,000 due requests answered", res.Requests, res.OK, res.Errors)
	}
	d := res.Schedule.Start.Sub(srv.StartedAt())
	t.Logf("the run started %v after the backend", d)
	switch dUs := d.Microseconds(); {
	case d < 0 || d >= 500*time.Millisecond:
		t.Logf("p90 not checked: the run started %v after the backend (want 0 to 0.5 s for the derivation)", d)
	case c.P90 < 900_000+dUs || c.P90 > 1_100_000+dUs:
		t.Errorf("corrected p90 %d µs, want about 1.0 s + d = %.3f s (±0.1 s)", c.P90, 1+d.Seconds())
	}
	if c.P99 < 1_850_000 || c.P99 > 2_050_000 {
		t.Errorf("corrected p99 %d µs, want about 1.9 s (1.85..2.05)", c.P99)
	}
	if c.P50 > 50_000 {
		t.Errorf("corrected p50 %d µs: 80%% of the requests never meet a stall", c.P50)
	}
	if u.P99 >= 100_000 {
		t.Errorf("uncorrected p99 %d µs: expected the fast mode (< 100 ms)", u.P99)
	}
	if c.Max < 1_900_000 || u.Max < 1_800_000 {
		t.Errorf("max corrected %d / uncorrected %d µs: both must see the ~2 s stall", c.Max, u.Max)
	}
	if res.Generator.Bottleneck {
		t.Logf("note: generator flagged itself: %s", res.Generator.Reason)
	}
}

// TestHeadAgainstTheBackend: HEAD requests to the backend get headers only.
func TestHeadAgainstTheBackend(t *testing.T) {
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := gen.Run(context.Background(), gen.Config{URL: "http://" + srv.Addr() + "/1k", Method: "HEAD",
		Connections: 2, Duration: 500 * time.Millisecond, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	if per := res.BytesRead / res.OK; per >= 1024 {
		t.Errorf("%d bytes per HEAD response: the 1 KiB body must not be sent or read", per)
	}
}
