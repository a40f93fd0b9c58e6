package gen

import (
	"crypto/tls"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/h2"
	"github.com/loadlab/loadlab/gen/internal/sock"
	"github.com/loadlab/loadlab/gen/result"
)

// pingFlood is an HTTP/2 server that sends its SETTINGS and then n PINGs,
// as fast as the socket takes them, and never reads: every acknowledgement
// the client queues stays unwritten once the socket buffers are full. With
// n == 0 it sends only the SETTINGS. It holds the connection until done,
// unless the client closed it.
func pingFlood(n int, done <-chan struct{}) func(net.Conn) {
	const batch = 1000
	ping := []byte{0, 0, 8, 0x6, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}
	pings := make([]byte, 0, batch*len(ping))
	for range batch {
		pings = append(pings, ping...)
	}
	return func(c net.Conn) {
		if tc, ok := c.(*tls.Conn); ok {
			if tc.Handshake() != nil {
				return
			}
		}
		if _, err := c.Write([]byte{0, 0, 0, 0x4, 0, 0, 0, 0, 0}); err != nil {
			return
		}
		for sent := 0; sent < n; sent += batch {
			if _, err := c.Write(pings); err != nil {
				return // the client closed the connection
			}
		}
		<-done
	}
}

// heapPeak samples the live heap (after a collection) every 10 ms until
// stop is closed and returns its largest value less the live heap before.
func heapPeak(stop <-chan struct{}) func() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	base := m.HeapAlloc
	var peak uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			runtime.GC()
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
		}
	}()
	return func() uint64 { wg.Wait(); return max(peak, base) - base }
}

// heapSlack is twice the spread of the live heap that runs of one
// configuration against a silent server added here (4.2 to 8.4 MiB: the
// latency histograms in the loops, the pool and the aggregator at the
// sampled moment).
const heapSlack = 8 << 20

// TestH2PingFlood runs HTTP/2 against a server that sends 1,000,000 PINGs
// on each connection and never reads (over h2c and TLS). Each connection
// ends with ENHANCE_YOUR_CALM once 10,000 acknowledgements wait unwritten,
// its requests fail as h2.calm, and every request of the schedule ends in
// one counted outcome. The live heap the run adds stays within what the
// same run against a server that sends nothing adds, plus the bound the
// caps give per connection (h2.MaxQueuedControlFrames+1 acknowledgements
// of 17 bytes, four times over: the output buffer's growth keeps at most
// twice its contents, its garbage as much again; over TLS sock.MaxQueued
// of records, twice, as TLS seals a copy), plus heapSlack for the run's
// own histograms, whose live share at a sample varies from run to run.
// Before the caps the flood added 76 MB (h2c) and 196 MB (TLS) here, and
// `loadlab gen --h2 -c 2 -d 8s` grew to 1.5 GB RSS in 12 s against an
// endless one.
//
// Not parallel: it measures the process's heap.
func TestH2PingFlood(t *testing.T) {
	caFile, good, _, _ := testCerts(t)
	for _, https := range []bool{false, true} {
		name := "h2c"
		if https {
			name = "tls"
		}
		t.Run(name, func(t *testing.T) {
			run := func(n int) (*result.Result, Config, uint64) {
				done := make(chan struct{})
				var srv *testServer
				if https {
					srv = startServerTLS(t, &tls.Config{Certificates: []tls.Certificate{good}, NextProtos: []string{"h2"}}, pingFlood(n, done))
				} else {
					srv = startServer(t, pingFlood(n, done))
				}
				t.Cleanup(func() { close(done) })
				cfg := misConfig(srv, https, caFile, true)
				cfg.HTTP2, cfg.Connections, cfg.Rate = true, 2, 100
				stop := make(chan struct{})
				peak := heapPeak(stop)
				res := runOnTime(t, cfg)
				close(stop)
				return res, cfg, peak()
			}
			quiet, _, quietHeap := run(0)
			res, cfg, heap := run(1_000_000)

			perConn := uint64(4 * (h2.MaxQueuedControlFrames + 1) * 17)
			if https {
				perConn += 2 * sock.MaxQueued
			}
			limit := quietHeap + uint64(cfg.Connections)*perConn + heapSlack
			t.Logf("io %s; errors %v; live heap added: %d KiB against a silent server, %d KiB against the flood (limit %d KiB)", res.Generator.IO, res.Errors, quietHeap>>10, heap>>10, limit>>10)
			if heap > limit {
				t.Errorf("the flood added %d KiB of live heap, want at most %d KiB (the silent server's %d KiB + %d connections x %d KiB + %d KiB slack)",
					heap>>10, limit>>10, quietHeap>>10, cfg.Connections, perConn>>10, heapSlack>>10)
			}

			if quiet.Errors["h2.calm"] != 0 {
				t.Errorf("a silent server: errors.h2.calm %d, want 0", quiet.Errors["h2.calm"])
			}
			if res.Errors["h2.calm"] == 0 {
				t.Fatalf("errors %v (samples %v): want h2.calm", res.Errors, res.ErrorSamples)
			}
			if s := res.ErrorSamples["h2.calm"]; !strings.Contains(s, "ENHANCE_YOUR_CALM") || !strings.Contains(s, "10000 control frames") {
				t.Errorf("h2.calm sample %q, want the GOAWAY's code and the bound", s)
			}
			for class, n := range res.Errors {
				if n > 0 && class != "h2.calm" && class != "dropped" && class != "timeout" {
					t.Errorf("errors.%s = %d (sample %q): want only h2.calm (and requests still queued at the end)", class, n, res.ErrorSamples[class])
				}
			}
			if res.OK != 0 {
				t.Errorf("ok %d from a server that never answers", res.OK)
			}
			checkOpenAccounting(t, res, cfg)
		})
	}
}
