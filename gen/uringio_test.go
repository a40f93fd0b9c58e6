package gen

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// needUring skips a test where io_uring cannot run the loops.
func needUring(t *testing.T) {
	t.Helper()
	f := uringFeatures()
	if m := f.Missing(); len(m) > 0 {
		t.Skipf("io_uring: %v", m)
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
		want string
	}{{IOEpoll, 0, "epoll"}, {IOUring, 0, "uring"}, {IOAuto, 0, "uring"}, {IOAuto, 200, "uring"}, {IOEpoll, 200, "epoll"}} {
		cfg := base
		cfg.IO, cfg.Rate = tc.io, tc.rate
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
	noUring = true
	defer func() { noUring = false }()
	cfg := base
	cfg.IO, cfg.Rate = IOAuto, 200
	res := runOnTime(t, cfg)
	if res.Generator.IO != "epoll" || !strings.Contains(res.Generator.IONote, "fell back") || res.OK == 0 {
		t.Errorf("auto without io_uring: generator.io %q (note %q), ok %d", res.Generator.IO, res.Generator.IONote, res.OK)
	}
	cfg.IO = IOUring
	if _, err := Run(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "use --io epoll") {
		t.Errorf("--io uring without io_uring: %v, want a usage error that says what to do", err)
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

// TestIOAutoPerRow: auto keeps each benchmark row's faster path: io_uring
// for HTTP/1.1, epoll for HTTP/2.
func TestIOAutoPerRow(t *testing.T) {
	needUring(t)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Rate: 100}, IOUring},
		{Config{}, IOUring},
		{Config{HTTP2: true, Rate: 100}, IOEpoll},
		{Config{HTTP2: true, Rate: 100, IO: IOUring}, IOUring},
	} {
		cfg := tc.cfg
		if cfg.IO == "" {
			cfg.IO = IOAuto
		}
		io, note, err := chooseIO(&run{cfg: &cfg})
		if err != nil || io != tc.want || note == "" {
			t.Errorf("%+v: %q (%q, %v), want %s", tc.cfg, io, note, err, tc.want)
		}
	}
}
