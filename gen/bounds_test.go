package gen

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// serialSlow answers one request at a time across all connections, each
// after delay: a server with a capacity of 1/delay requests per second.
func serialSlow(resp string, delay time.Duration) func(net.Conn) {
	var mu sync.Mutex
	return eachRequest(func(c net.Conn) bool {
		mu.Lock()
		time.Sleep(delay)
		_, err := io.WriteString(c, resp)
		mu.Unlock()
		return err == nil
	})
}

// TestOpenLoopOverloadIsBounded drives an open loop at 2000 requests/s
// against a server that manages 100: the requests the connections cannot
// take wait in the pending queue, which is capped by MaxPending; when it is
// full the longest-waiting one is evicted as dropped, never queued without
// bound. The latency of the requests that do complete counts from their
// intended send time, so it includes the wait in the queue that the
// uncorrected latency leaves out; the dropped ones count the wait they had.
func TestOpenLoopOverloadIsBounded(t *testing.T) {
	t.Parallel()
	srv := startServer(t, serialSlow("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 10*time.Millisecond))
	cfg := Config{URL: srv.url("http"), Connections: 10, Duration: 2 * time.Second, Timeout: 2 * time.Second,
		Rate: 2000, MaxPending: 100}
	res := runOnTime(t, cfg)
	checkClasses(t, res, misCase{ok: true, class: "dropped", sample: "evicted unsent"})
	checkOpenAccounting(t, res, cfg)
	g := res.Generator
	t.Logf("ok %d, dropped %d, unfinished %d, late %d; latency p50 corrected %d µs vs uncorrected %d µs",
		res.OK, g.Dropped, g.Unfinished, g.LateSends, res.Latency.P50, res.LatencyUncorrected.P50)
	if g.MaxPending != 100 {
		t.Errorf("max_pending %d, want 100", g.MaxPending)
	}
	// 4000 due; the server completes about 100/s for 2 s plus the drain,
	// and the queue holds at most 100: at least 4000 - 400 - 100 - 10 are
	// dropped whatever the timing.
	if g.Dropped < 3400 {
		t.Errorf("dropped %d, want most of the 4000 due requests", g.Dropped)
	}
	if g.LateSends == 0 {
		t.Error("late_sends 0: requests that waited in the queue were sent late")
	}
	c, u := res.Latency2xx, res.LatencyUncorrected
	if c.P50 <= u.P50 || c.Max <= u.Max {
		t.Errorf("corrected 2xx latency (p50 %d µs, max %d µs) must exceed the uncorrected (p50 %d µs, max %d µs): it counts the wait in the queue",
			c.P50, c.Max, u.P50, u.Max)
	}
	// The wait in a queue of 100 drained at 100/s approaches 1 s.
	if c.Max < 500_000 {
		t.Errorf("corrected 2xx max %d µs: the queueing delay is missing", c.Max)
	}
	// Nearly every request is evicted, each after waiting while the queue
	// filled behind it: a loop's share of the queue (100/L) at its share of
	// the rate (2000/L per second) is 50 ms, whatever the number of loops
	// L. That is the median of all outcomes.
	if p := res.Latency.P50; p < 45_000 || p > 60_000 {
		t.Errorf("corrected p50 %d µs over every outcome: want about 50 ms, the wait of an evicted request", p)
	}
}
