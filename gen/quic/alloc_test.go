package quic

import (
	"crypto/sha256"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
)

// One full handshake and request, in steady state (a reused Conn,
// Client and driver), allocates no more than the crypto constructors:
// per connection the AEADs and AES header protection ciphers of three
// levels (twelve constructor calls, two allocations or fewer each), plus,
// with verification, what crypto/ecdsa's signature check allocates.
func TestAllocsPerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	addr, ca := startServerProcess(t, certs.P256, 1000)
	for _, c := range []struct {
		name     string
		insecure bool
		max      float64
	}{{"insecure", true, 18}, {"verified", false, 30}} {
		cl := newTestClient(t, ca, c.insecure, nil)
		d := newDriver(t, addr)
		var conn Conn
		run := func() {
			if err := d.run(cl, &conn, 5*time.Second); err != nil || conn.Status() != 200 {
				t.Fatalf("%v status %d", err, conn.Status())
			}
		}
		run()
		got := testing.AllocsPerRun(20, run)
		t.Logf("%s: %.1f allocations per connection", c.name, got)
		if got > c.max {
			t.Errorf("%s: %.1f allocations per connection, want <= %v", c.name, got, c.max)
		}
	}
}

// A keep-alive request in steady state (after the first few on the
// connection) allocates nothing: Next, Receive and Timeout reuse the
// Conn's buffers, the response's QPACK decoding reuses its own. The
// server runs in a child process, so its allocations do not count.
//
// The count is the process's (runtime.MemStats), not divided:
// testing.AllocsPerRun divides in integers (199 allocations in 200 runs
// read 0). It also counts what is not the request path's: the runtime's
// background work (a GC cycle's mark workers) and the test driver's
// socket calls (SetReadDeadline grows a P's timer heap when the
// goroutine moves to another P), one or two in some runs. So a run of
// 200 requests is tried up to three times and one must count 0; an
// allocation in the request path counts in every run. On failure the
// memory profile (at rate 1 from the test's start: it sees most, not
// all, allocations) names the stacks through a Conn method.
func TestAllocsPerKeepAliveRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	defer func(r int) { runtime.MemProfileRate = r }(runtime.MemProfileRate)
	runtime.MemProfileRate = 1
	addr, ca := startServerProcess(t, certs.P256, 1000)
	cl := newTestClient(t, ca, true, func(c *Config) { c.KeepAlive = true })
	d := newDriver(t, addr)
	var conn Conn
	conn.Body = sha256.New()
	if err := d.first(cl, &conn, 5*time.Second); err != nil || conn.Status() != 200 {
		t.Fatalf("%v status %d", err, conn.Status())
	}
	run := func() {
		if err := d.next(&conn, 5*time.Second); err != nil || conn.Status() != 200 || conn.BodyBytes() != 1000 {
			t.Fatalf("%v status %d body %d", err, conn.Status(), conn.BodyBytes())
		}
	}
	// Past quic-go's first key update (after 100 packets; a key update
	// allocates the new AEADs), the next being 100,000 packets away.
	for i := 0; i < 150; i++ {
		run()
	}
	if conn.keyUpdates != 1 {
		t.Fatalf("%d key updates in the warm-up, want quic-go's first", conn.keyUpdates)
	}
	const n = 200
	var counts []uint64
	before := packageAllocs()
	for try := 0; try < 3; try++ {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := 0; i < n; i++ {
			run()
		}
		runtime.ReadMemStats(&m1)
		counts = append(counts, m1.Mallocs-m0.Mallocs)
		if m1.Mallocs == m0.Mallocs {
			t.Logf("0 allocations in %d keep-alive requests on one connection (runs: %v)", n, counts)
			return
		}
	}
	got, stacks := allocsSince(before)
	t.Errorf("allocations in three runs of %d keep-alive requests: %v, want a run with 0; %d profiled through a Conn method, at\n%s", n, counts, got, strings.Join(stacks, "\n"))
}

// packageAllocs returns the allocations the memory profile has
// recorded with a stack through a Conn method, by stack (the profile
// must be at rate 1 to see them all).
func packageAllocs() map[string]int64 {
	for i := 0; i < 3; i++ {
		runtime.GC() // the profile is published by GC cycles, up to two behind
	}
	n, _ := runtime.MemProfile(nil, true)
	recs := make([]runtime.MemProfileRecord, n+100)
	n, _ = runtime.MemProfile(recs, true)
	const pkg = "github.com/loadlab/loadlab/gen/quic."
	m := map[string]int64{}
	for _, r := range recs[:n] {
		frames := runtime.CallersFrames(r.Stack())
		in := false
		var stack strings.Builder
		for {
			f, more := frames.Next()
			if f.Function == pkg+"packageAllocs" {
				in = false // this count's own
				break
			}
			in = in || strings.HasPrefix(f.Function, pkg+"(*Conn).")
			stack.WriteString(f.Function + "\n")
			if !more {
				break
			}
		}
		if in {
			m[stack.String()] += r.AllocObjects
		}
	}
	return m
}

// allocsSince returns the allocations of packageAllocs not in before,
// and their stacks.
func allocsSince(before map[string]int64) (int64, []string) {
	var n int64
	var stacks []string
	for k, v := range packageAllocs() {
		if d := v - before[k]; d > 0 {
			n += d
			stacks = append(stacks, k)
		}
	}
	return n, stacks
}
