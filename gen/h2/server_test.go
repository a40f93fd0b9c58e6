package h2

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"golang.org/x/net/http2"
)

var body1k, body1m = testutil.Body(1024), testutil.Body(1 << 20)

// testHandler serves /1k, /1m, /reset (the handler aborts: RST_STREAM
// INTERNAL_ERROR), /status/NNN and /sum (the sha256 of the request body).
func testHandler(count *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		switch p := r.URL.Path; {
		case p == "/1k":
			w.Write(body1k)
		case p == "/1m":
			w.Write(body1m)
		case p == "/reset":
			panic(http.ErrAbortHandler)
		case p == "/sum":
			h := sha256.New()
			io.Copy(h, r.Body)
			w.Write([]byte(hex.EncodeToString(h.Sum(nil))))
		case len(p) == len("/status/200") && p[:8] == "/status/":
			code, _ := strconv.Atoi(p[8:])
			w.WriteHeader(code)
		default:
			w.WriteHeader(404)
		}
	})
}

// runResult is what drive saw.
type runResult struct {
	rec        *recorder
	conns      int // connections used
	retried    int // refused requests started again
	maxActive  int
	serverSeen []byte // bytes the server sent on the first connection
}

// drive runs total requests closed loop (every free stream starts the next
// request) on connections from dial, reconnecting after GOAWAY and
// retrying refused requests; onDone runs after each completed response
// with the number completed so far. It fails the test on a stall.
func drive(t testing.TB, dial func() net.Conn, cfg Config, req Request, total int, want []byte, onDone func(done int)) runResult {
	t.Helper()
	if req.Scheme == "" {
		req.Scheme, req.Authority = "http", "127.0.0.1"
	}
	tmpl, err := NewTemplate(req)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(cfg.MaxStreams, false, true)
	rec.want = want
	c, err := NewConn(cfg, tmpl, rec)
	if err != nil {
		t.Fatal(err)
	}
	res := runResult{rec: rec}
	var capture bytes.Buffer
	lastDone := 0
	for rec.done+rec.resets < total {
		nc := dial()
		res.conns++
		c.Reset()
		type chunk struct {
			b   []byte
			err error
		}
		reads := make(chan chunk, 16)
		go func() {
			for {
				buf := make([]byte, 64<<10)
				n, err := nc.Read(buf)
				reads <- chunk{buf[:n], err}
				if err != nil {
					return
				}
			}
		}()
		for rec.done+rec.resets < total {
			for c.Free() > 0 && rec.done+rec.resets+c.Active() < total {
				if c.Start() < 0 {
					t.Fatal("Start failed with Free > 0")
				}
			}
			res.maxActive = max(res.maxActive, c.Active())
			for len(c.Pending()) > 0 {
				n, err := nc.Write(c.Pending())
				c.Wrote(n)
				if err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			if c.Closing() && c.Active() == 0 {
				break // GOAWAY: reconnect
			}
			var ch chunk
			select {
			case ch = <-reads:
			case <-time.After(20 * time.Second):
				t.Fatalf("no progress: %d done, %d reset, %d refused of %d (active %d)", rec.done, rec.resets, rec.refused, total, c.Active())
			}
			if res.conns == 1 {
				capture.Write(ch.b)
			}
			if err := c.Feed(ch.b); err != nil {
				t.Fatalf("Feed: %v", err)
			}
			if ch.err != nil {
				if c.Active() > 0 {
					t.Fatalf("connection ended with %d streams busy: %v", c.Active(), ch.err)
				}
				break
			}
			if onDone != nil && rec.done != lastDone {
				lastDone = rec.done
				onDone(rec.done)
			}
		}
		nc.Close()
		if res.conns > total+10 {
			t.Fatal("reconnecting without progress")
		}
	}
	res.retried = rec.refused
	if rec.mismatches > 0 {
		t.Fatalf("%d of %d bodies did not hash to the expected digest", rec.mismatches, rec.done)
	}
	res.serverSeen = capture.Bytes()
	return res
}

func TestServerCounts(t *testing.T) {
	var count atomic.Int64
	s := testutil.StartH2Server(t, testHandler(&count), testutil.H2Options{Pipe: true})
	res := drive(t, s.Dial, Config{MaxStreams: 10}, Request{Path: "/1k"}, 2000, sha(body1k), nil)
	rec := res.rec
	if rec.done != 2000 || rec.responses != 2000 || rec.resets != 0 || rec.refused != 0 || count.Load() != 2000 {
		t.Fatalf("done %d responses %d resets %d refused %d, server saw %d", rec.done, rec.responses, rec.resets, rec.refused, count.Load())
	}
	if rec.bodyBytes != 2000*1024 || res.conns != 1 || res.maxActive != 10 {
		t.Fatalf("%d body bytes, %d connections, at most %d streams at once", rec.bodyBytes, res.conns, res.maxActive)
	}
}

func TestServerStatusAndReset(t *testing.T) {
	var count atomic.Int64
	s := testutil.StartH2Server(t, testHandler(&count), testutil.H2Options{Pipe: true})
	res := drive(t, s.Dial, Config{MaxStreams: 4}, Request{Path: "/status/418"}, 50, nil, nil)
	for _, st := range res.rec.status {
		if st != 418 {
			t.Fatalf("statuses %v, want 418", res.rec.status)
		}
	}
	res = drive(t, s.Dial, Config{MaxStreams: 4}, Request{Path: "/reset"}, 50, nil, nil)
	if res.rec.resets != 50 || res.rec.done != 0 || res.conns != 1 {
		t.Fatalf("/reset: %d resets, %d done over %d connections", res.rec.resets, res.rec.done, res.conns)
	}
	for _, e := range res.rec.events {
		if e.kind == "reset" && e.code != http2.ErrCodeInternal {
			t.Fatalf("reset code %v", e.code)
		}
	}
}

func TestServerMaxConcurrentStreamsLower(t *testing.T) {
	const limit, total = 3, 300
	var inflight, peak, arrived atomic.Int64
	var count atomic.Int64
	inner := testHandler(&count)
	gate := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := arrived.Add(1)
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		// The first limit requests wait for each other: a client that
		// opened fewer streams would stall here (and fail below), one that
		// opened more would be refused by the server.
		if a <= limit {
			if a == limit {
				close(gate)
			}
			select {
			case <-gate:
			case <-time.After(5 * time.Second):
				t.Errorf("request %d: only %d requests arrived concurrently", a, arrived.Load())
			}
		}
		inner.ServeHTTP(w, r)
	})
	s := testutil.StartH2Server(t, h, testutil.H2Options{Pipe: true, Server: func() *http2.Server { return &http2.Server{MaxConcurrentStreams: limit} }})
	res := drive(t, s.Dial, Config{MaxStreams: 10}, Request{Path: "/1k"}, total, sha(body1k), nil)
	if res.rec.done != total || res.rec.refused != 0 || res.rec.resets != 0 {
		t.Fatalf("done %d refused %d resets %d", res.rec.done, res.rec.refused, res.rec.resets)
	}
	if peak.Load() != limit || res.maxActive != limit {
		t.Fatalf("server saw at most %d concurrent requests, client had %d open; want %d (MAX_CONCURRENT_STREAMS)", peak.Load(), res.maxActive, limit)
	}
}

func TestServerGoAwayMidRun(t *testing.T) {
	var count atomic.Int64
	s := testutil.StartH2Server(t, testHandler(&count), testutil.H2Options{Pipe: true})
	// Every 100 responses the server shuts the current connection down
	// gracefully, as nginx does at keepalive_requests: a GOAWAY with
	// 2^31-1, a PING, then the GOAWAY with the real last stream id.
	const total, per = 1000, 100
	conn := 0
	res := drive(t, s.Dial, Config{MaxStreams: 10}, Request{Path: "/1k"}, total, sha(body1k), func(done int) {
		if done < total && done/per > conn && int64(conn) < s.Conns.Load() {
			s.Shutdown(conn)
			conn++
		}
	})
	rec := res.rec
	if rec.done != total || rec.resets != 0 {
		t.Fatalf("done %d resets %d", rec.done, rec.resets)
	}
	if rec.goaways < conn || res.conns < conn+1 {
		t.Fatalf("%d GOAWAYs over %d connections after %d shutdowns", rec.goaways, res.conns, conn)
	}
	// Every request ended exactly once: the server answered the completed
	// ones and never the refused ones.
	if got := count.Load(); got != int64(total) {
		t.Fatalf("server handled %d requests, client completed %d (refused and retried %d)", got, rec.done, res.retried)
	}
}

func TestServerLargeBodiesAndFlowControl(t *testing.T) {
	var count atomic.Int64
	small := func() *http2.Server {
		return &http2.Server{MaxUploadBufferPerStream: 1 << 16, MaxUploadBufferPerConnection: 1 << 16}
	}
	s := testutil.StartH2Server(t, testHandler(&count), testutil.H2Options{Server: small})
	for _, cfg := range []Config{
		{MaxStreams: 4},
		{MaxStreams: 4, StreamWindow: initialWindow, ConnWindow: initialWindow},
		{MaxStreams: 4, StreamWindow: 1 << 17, MaxFrameSize: 1 << 20},
	} {
		res := drive(t, s.Dial, cfg, Request{Path: "/1m"}, 20, sha(body1m), nil)
		if res.rec.done != 20 || res.rec.bodyBytes != 20<<20 {
			t.Fatalf("%+v: done %d, %d body bytes", cfg, res.rec.done, res.rec.bodyBytes)
		}
	}
	// Upload 3 MiB through the server's 64 KiB windows.
	up := testutil.Body(3 << 20)
	upSum := sha256.Sum256(up)
	res := drive(t, s.Dial, Config{MaxStreams: 2}, Request{Method: "POST", Path: "/sum", Body: up}, 4, sha([]byte(hex.EncodeToString(upSum[:]))), nil)
	if res.rec.done != 4 || res.rec.bodyBytes != 4*64 {
		t.Fatalf("uploads: done %d, %d body bytes", res.rec.done, res.rec.bodyBytes)
	}
}
