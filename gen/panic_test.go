package gen

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// clientSockets counts this process's sockets whose peer is addr (the
// generator's connections to the test server; the server's own sockets
// have the generator's ports as peers).
func clientSockets(t *testing.T, addr string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err != nil {
			continue
		}
		sa, err := unix.Getpeername(fd)
		if err != nil {
			continue
		}
		if in4, ok := sa.(*unix.SockaddrInet4); ok && (&net.TCPAddr{IP: in4.Addr[:], Port: in4.Port}).String() == addr {
			n++
		}
	}
	return n
}

// threadStart is when thread tid of this process started (its stat's
// starttime), "" when there is no such thread.
func threadStart(tid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22 of stat, counted from the state (field 3)
}

// TestLoopPanic runs an engine whose parsing panics (the read hook of a
// test build panics at the loop's 200th read; HTTP/1.1, HTTP/2 and HTTP/3
// on the lean QUIC client):
// the run ends at once with one line naming the loop, the panic and the
// server's bytes it was reading (hex), the partial result is kept with
// every request it counts in one outcome, and nothing is left: the loop's
// thread is gone, and so is every socket of the run. Before, the panic
// took the whole process down.
func TestLoopPanic(t *testing.T) {
	for _, name := range []string{"h1", "h2", "h3"} {
		t.Run(name, func(t *testing.T) {
			var cfg Config
			var left func() int // what is left of the run's sockets
			switch name {
			case "h1":
				s := startServer(t, reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
				cfg.URL = s.url("http")
				left = func() int { return clientSockets(t, s.Addr()) }
			case "h2":
				s := testutil.StartH2Server(t, fixedBody(100), testutil.H2Options{})
				cfg.URL, cfg.HTTP2 = s.URL, true
				addr := strings.TrimSuffix(strings.TrimPrefix(s.URL, "http://"), "/")
				left = func() int { return clientSockets(t, addr) }
			case "h3": // the lean QUIC client: one UDP socket per loop
				cfg = leanH3Config(startH3Server(t, fixedBody(100)))
				cfg.NewConn = false
				before := openFds(t)
				left = func() int { return openFds(t) - before }
			}
			cfg.Connections, cfg.Duration, cfg.Timeout, cfg.CPUs = 4, 5*time.Second, time.Second, pin.CPUSet{lastCPU(t)}
			var (
				mu    sync.Mutex
				reads int
				tid   int
				born  string
				shown []byte
			)
			start := time.Now()
			cfg.readHook = func(b []byte) {
				mu.Lock()
				defer mu.Unlock()
				if reads++; reads == 200 { // many responses in: some are ok
					tid, shown = unix.Gettid(), append([]byte(nil), b[:min(len(b), panicShow)]...)
					born = threadStart(tid)
					panic("test: the parser broke")
				}
			}
			res, err := Run(context.Background(), cfg)
			took := time.Since(start)
			if err == nil || res == nil {
				t.Fatalf("a loop panicked: result %v, error %v; want both", res != nil, err)
			}
			msg := err.Error()
			t.Logf("%s", msg)
			for _, want := range []string{"loop 0 on CPU", "panicked: test: the parser broke", "panic_test.go:", fmt.Sprintf("%x", shown)} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is more than one line", msg)
			}
			if took > 3*time.Second {
				t.Errorf("the run took %v of its 5 s: it did not end at the panic", took)
			}
			if got := res.OK + nonOK(res) + res.ErrorCount(); res.OK == 0 || got != res.Requests || uint64(res.CorrectedHist.TotalCount()) != res.Requests {
				t.Errorf("ok %d + non-2xx %d + errors %v = %d, corrected histogram %d, want requests %d (and some ok)",
					res.OK, nonOK(res), res.Errors, got, res.CorrectedHist.TotalCount(), res.Requests)
			}
			if !strings.Contains(res.ErrorSamples["other"], "panicked") {
				t.Errorf("the loop's requests in flight: samples %v, want other with the panic", res.ErrorSamples)
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				// The thread is gone, or its id is another thread's
				// now (ids are reused: pid_max may be 32768). A loop
				// that ran on the process's main thread leaves it
				// parked: the runtime never ends that one (as after
				// any run).
				alive := threadStart(tid) == born && tid != os.Getpid()
				n := left()
				if !alive && n <= 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the run: the loop's thread %d still there, %d of the run's sockets", tid, n)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
