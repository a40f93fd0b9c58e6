package gen

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
)

// TestShardRun: a shard of an open-loop run opens its share of the
// connections, sends its share of the schedule from the start time, and
// records what makes it mergeable.
func TestShardRun(t *testing.T) {
	var accepted atomic.Int64
	srv := startServer(t, func(c net.Conn) {
		accepted.Add(1)
		reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")(c)
	})
	at := time.Now().Add(300 * time.Millisecond)
	cfg := Config{URL: srv.url("http"), Rate: 1000, Duration: 2 * time.Second, Connections: 10, Timeout: 5 * time.Second,
		Shard: Shard{Index: 1, Count: 4}, StartAt: at, Host: "node-b", CPUs: nil}
	begin := time.Now()
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(begin) < 2300*time.Millisecond { // 0.3 s wait + 2 s run
		t.Fatalf("the run ended %v after it was called: it did not wait for the start time", time.Since(begin))
	}
	// 2 s at 1,000/s: requests 0..1999, every 4th from 1 is this shard's.
	if res.Requests != 500 || res.OK != 500 {
		t.Fatalf("requests %d ok %d, want the shard's 500 of 2000", res.Requests, res.OK)
	}
	// 10 connections over 4 shards: 3, 3, 2, 2 (+1 for the start probe).
	if res.Connections != 3 || accepted.Load() > 3+1 {
		t.Fatalf("connections %d, server accepted %d: want shard 1/4's 3 (+ the probe)", res.Connections, accepted.Load())
	}
	if res.RequestedRate != 250 {
		t.Fatalf("requested rate %g, want the shard's 250", res.RequestedRate)
	}
	s := res.Schedule
	if res.Shard == nil || *res.Shard != (result.ShardInfo{Index: 1, Count: 4}) || res.Host != "node-b" || s == nil || !s.Start.Equal(at.Round(0)) ||
		s.Rate != 1000 || s.Connections != 10 || s.Shards != 4 || s.DurationS != 2 {
		t.Fatalf("shard %+v host %q schedule %+v (start want %v)", res.Shard, res.Host, s, at)
	}
	if len(res.Seconds) < 2 || res.Seconds[0].AtMs != at.UnixMilli() || res.Seconds[1].AtMs != at.Add(time.Second).UnixMilli() || res.Seconds[0].Hist == "" {
		t.Fatalf("per-second keys %+v, want from %d", res.Seconds, at.UnixMilli())
	}
	h := res.Histograms
	if h == nil || h.Corrected == "" || h.OK == "" || h.Uncorrected == "" {
		t.Fatalf("histograms %+v", h)
	}
	c, err := result.DecodeHist(h.Corrected)
	if err != nil || c.TotalCount() != int64(res.Requests) || c.ValueAtQuantile(99) != res.Latency.P99 {
		t.Fatalf("encoded corrected histogram: %v, %d values, p99 %d (result %d)", err, c.TotalCount(), c.ValueAtQuantile(99), res.Latency.P99)
	}
}

// TestShardRunClosed: closed loop, a shard runs its share of the
// connections and of --requests.
func TestShardRunClosed(t *testing.T) {
	var accepted atomic.Int64
	srv := startServer(t, func(c net.Conn) {
		accepted.Add(1)
		reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")(c)
	})
	// 101 requests over 4 shards: 26, 25, 25, 25; 10 connections: 3, 3, 2, 2.
	res, err := Run(context.Background(), Config{URL: srv.url("http"), Connections: 10, Requests: 101, Duration: 10 * time.Second,
		Timeout: 5 * time.Second, Shard: Shard{Index: 2, Count: 4}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "closed" || res.Requests != 25 || res.OK != 25 || res.Connections != 2 || accepted.Load() > 2+1 {
		t.Fatalf("mode %s requests %d ok %d connections %d accepted %d; want closed, 25, 25, 2, <= 3", res.Mode, res.Requests, res.OK, res.Connections, accepted.Load())
	}
}

// TestShardRunH3: the HTTP/3 engine takes the same share of the schedule
// and of the connections, from the start time.
func TestShardRunH3(t *testing.T) {
	s := startH3Server(t, fixedBody(100))
	cfg := h3Config(s)
	cfg.Connections, cfg.Rate, cfg.Duration = 7, 400, 1500*time.Millisecond
	cfg.Shard = Shard{Index: 2, Count: 3}
	cfg.StartAt = time.Now().Add(200 * time.Millisecond)
	res := runH3Test(t, cfg)
	// 1.5 s at 400/s: requests 0..599; j mod 3 = 2 are 200 of them.
	if res.Requests != 200 || res.OK != 200 || res.Connections != 2 || res.RequestedRate != 400.0/3 {
		t.Fatalf("requests %d ok %d connections %d rate %g; want 200, 200, 2 (7 over 3 shards: 3, 2, 2), 133.3", res.Requests, res.OK, res.Connections, res.RequestedRate)
	}
	if res.Schedule == nil || !res.Schedule.Start.Equal(cfg.StartAt.Round(0)) || res.Shard == nil || res.Shard.Index != 2 || res.Histograms == nil {
		t.Fatalf("schedule %+v shard %+v histograms %v", res.Schedule, res.Shard, res.Histograms != nil)
	}
}
