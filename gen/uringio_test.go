package gen

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
	"github.com/loadlab/loadlab/internal/testutil"
)

// needUring skips a test where io_uring cannot run the loops.
func needUring(t *testing.T) {
	t.Helper()
	if _, _, err := tcploop.ChooseIO(&run.Spec{IO: run.IOUring}); err != nil {
		t.Skipf("io_uring: %v", err)
	}
}

// TestIOChoice: --io picks the path and the result says which ran and why;
// what the ring cannot drive is an error when asked for and a fallback
// under auto.
func TestIOChoice(t *testing.T) {
	needUring(t)
	srv := startServer(t, reply(okResp))
	base := Config{URL: srv.url("http"), Connections: 2, Duration: 300 * time.Millisecond, Timeout: time.Second}
	for _, tc := range []struct {
		io   string
		rate float64
		tol  time.Duration
		want string
	}{{IOEpoll, 0, 0, "epoll"}, {IOUring, 0, 0, "uring"}, {IOAuto, 0, 0, "uring"}, {IOAuto, 200, time.Millisecond, "uring"},
		{IOAuto, 200, 0, "epoll"}, {IOUring, 200, 0, "uring"}, {IOEpoll, 200, 0, "epoll"}} {
		cfg := base
		cfg.IO, cfg.Rate, cfg.PacingTolerance = tc.io, tc.rate, tc.tol
		res := runOnTime(t, cfg)
		if res.Generator.IO != tc.want || res.Generator.IONote == "" || res.OK == 0 || res.ErrorCount() != 0 {
			t.Errorf("--io %s: generator.io %q (note %q), ok %d errors %v: want %s", tc.io, res.Generator.IO, res.Generator.IONote, res.OK, res.Errors, tc.want)
		}
	}
	bad := base
	bad.IO = "kqueue"
	if _, err := Run(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "epoll, uring or auto") {
		t.Errorf("--io kqueue: %v, want a usage error", err)
	}
	// Where io_uring is unusable: auto falls back and says why, an
	// explicit uring is a usage error.
	tcploop.NoUring = true
	defer func() { tcploop.NoUring = false }()
	cfg := base
	cfg.IO, cfg.Rate = IOAuto, 200
	res := runOnTime(t, cfg)
	if res.Generator.IO != "epoll" || !strings.Contains(res.Generator.IONote, "fell back") || res.OK == 0 {
		t.Errorf("auto without io_uring: generator.io %q (note %q), ok %d", res.Generator.IO, res.Generator.IONote, res.OK)
	}
	cfg.IO = IOUring
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "use IO epoll") {
		t.Errorf("IO uring without io_uring: %v, want a usage error that says what to do (naming the Config field)", err)
	}
}

// TestUringNewConnCloses: a new connection per request, reset on close:
// connects and closes go through the ring, every request is answered, and
// no descriptor outlives the run (a close queued behind a pending receive
// would keep the socket open).
func TestUringNewConnCloses(t *testing.T) {
	needUring(t)
	srv := startServer(t, reply(okResp))
	before := openFds(t)
	for _, mode := range []CloseMode{CloseFIN, CloseRST} {
		res := runOnTime(t, Config{URL: srv.url("http"), Connections: 4, Duration: 500 * time.Millisecond,
			Timeout: time.Second, NewConn: true, Close: mode, IO: IOUring})
		if res.OK < 50 || res.ErrorCount() != 0 || res.Handshakes < res.OK {
			t.Errorf("close %v: ok %d handshakes %d errors %v %v", mode, res.OK, res.Handshakes, res.Errors, res.ErrorSamples)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if after := openFds(t); after > before+2 {
		t.Errorf("%d descriptors open after the runs, %d before", after, before)
	}
}

func openFds(t *testing.T) int {
	t.Helper()
	d, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	return len(d)
}

// TestUringFailureEndsRun: when the ring fails mid-run (io_uring_enter
// returns an unexpected error, or the submission queue is full and the
// kernel refuses it), the run stops at once with a one-line error that
// wraps the cause and says what to do, and its result still gives every
// owed request exactly one outcome; no socket is left open.
func TestUringFailureEndsRun(t *testing.T) {
	needUring(t)
	srv := startServer(t, reply(okResp))
	h2 := h2Config(testutil.StartH2Server(t, fixedBody(100), testutil.H2Options{}), "/")
	before := openFds(t)
	for _, call := range []string{"enter", "sqe"} {
		for _, tc := range []struct {
			name string
			h2   bool
			rate float64
			tol  time.Duration
		}{{"closed", false, 0, 0}, {"open", false, 2000, 0}, {"open-1ms", false, 2000, time.Millisecond}, {"h2-open", true, 2000, 0}} {
			var start atomic.Int64
			cfg := Config{URL: srv.url("http"), Connections: 4, Duration: 5 * time.Second, Timeout: time.Second,
				Rate: tc.rate, PacingTolerance: tc.tol, IO: IOUring}
			if tc.h2 {
				cfg.URL, cfg.HTTP2 = h2.URL, true
			}
			cfg.uringFault = func(c string) error {
				now := time.Now().UnixNano()
				start.CompareAndSwap(0, now)
				if c == call && now-start.Load() > int64(300*time.Millisecond) {
					return unix.EFAULT
				}
				return nil
			}
			t0 := time.Now()
			res, err := Run(context.Background(), cfg)
			took := time.Since(t0)
			what := call + " " + tc.name
			if err == nil || !errors.Is(err, unix.EFAULT) || !strings.Contains(err.Error(), "use {IO} epoll") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: error %v, want one line wrapping EFAULT that says to use {IO} epoll", what, err)
			}
			if res == nil {
				t.Fatalf("%s: no result", what)
			}
			if took > 3*time.Second || res.DurationS > 2 {
				t.Errorf("%s: the run took %v (window %.3f s) of its 5 s: it did not stop at the failure", what, took, res.DurationS)
			}
			if got := res.OK + nonOK(res) + res.ErrorCount(); res.OK == 0 || got != res.Requests || uint64(res.CorrectedHist.TotalCount()) != res.Requests {
				t.Errorf("%s: ok %d + non-2xx %d + errors %v = %d, corrected histogram %d, want requests %d (and some ok)",
					what, res.OK, nonOK(res), res.Errors, got, res.CorrectedHist.TotalCount(), res.Requests)
			}
			if tc.rate > 0 {
				// The failing loop's window ends at the failure, the
				// other loops' soon after: every intended time before
				// its loop's end is owed, none after.
				if due := tc.rate * res.DurationS; float64(res.Requests) > due+float64(cfg.Connections) || float64(res.Requests) < 0.5*due {
					t.Errorf("%s: requests %d over a %.3f s window at %v/s", what, res.Requests, res.DurationS, tc.rate)
				}
			}
			if m, ok := res.ErrorSamples["other"]; ok && !strings.Contains(m, "io_uring") {
				t.Errorf("%s: error sample %q, want the ring's failure", what, m)
			}
		}
	}
	time.Sleep(50 * time.Millisecond)
	if after := openFds(t); after > before+2 {
		t.Errorf("%d descriptors open after the runs, %d before", after, before)
	}
}
