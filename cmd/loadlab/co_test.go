package main

import (
	"context"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
)

// TestCoordinatedOmission checks the heart of the measurement: a backend that
// stalls 1 s every 5 s, driven at 1,000 req/s for 10 s over 10 connections.
//
// Expected distribution: the backend's windows are [5,6) and [10,11) s after
// it starts, so the run sees one full stall. Every request due during the
// stall (about 1,000 of the 10,000, i.e. 10%) is answered when the stall
// ends, so its latency from its intended time is spread evenly over 0-1 s.
// The corrected p99 is the top 1% of all requests = the top 10% of the
// stalled ones, i.e. at least ~0.9 s (we assert >= 800 ms).
//
// Uncorrected latency is measured from the actual write. Only the requests
// already written when the stall began (at most one per connection, 10)
// wait long; the ~1,000 queued behind busy connections are written after
// the stall and answered at once. So about 0.1-0.2% of requests are slow
// from the write: the uncorrected p99 stays in the fast mode (we assert
// below 100 ms), which is exactly the coordinated-omission error.
func TestCoordinatedOmission(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s run")
	}
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0", StallEvery: 5 * time.Second, StallFor: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res, err := gen.Run(context.Background(), gen.Config{
		URL:         "http://" + srv.Addr() + "/1k",
		Rate:        1000,
		Duration:    10 * time.Second,
		Connections: 10,
		Timeout:     3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corrected p50 %d p99 %d max %d µs; uncorrected p50 %d p99 %d max %d µs; ok %d",
		res.Latency.P50, res.Latency.P99, res.Latency.Max,
		res.LatencyUncorrected.P50, res.LatencyUncorrected.P99, res.LatencyUncorrected.Max, res.OK)
	if res.OK < 9000 || res.ErrorCount() != 0 {
		t.Fatalf("ok %d errors %v: the run itself failed", res.OK, res.Errors)
	}
	if res.Latency.P99 < 800_000 {
		t.Errorf("corrected p99 %d µs: the 1 s stall must show (>= 800 ms)", res.Latency.P99)
	}
	if res.LatencyUncorrected.P99 >= 100_000 {
		t.Errorf("uncorrected p99 %d µs: expected the fast mode (< 100 ms)", res.LatencyUncorrected.P99)
	}
	if res.Latency.Max < 900_000 || res.LatencyUncorrected.Max < 800_000 {
		t.Errorf("max corrected %d / uncorrected %d µs: both must see the ~1 s stall", res.Latency.Max, res.LatencyUncorrected.Max)
	}
	if res.Generator.Bottleneck {
		t.Logf("note: generator flagged itself: %s", res.Generator.Reason)
	}
}
