package gen

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Config is a short HTTP/2 run against s.
func h2Config(s *testutil.H2Server, path string) Config {
	return Config{
		URL:         s.URL + path[1:],
		HTTP2:       true,
		Connections: 4,
		Duration:    1500 * time.Millisecond,
		Timeout:     5 * time.Second, // generous: this machine is shared, and -race is slow
		TLS:         TLSOptions{CAFile: s.CAFile},
	}
}

// rawH2 is a scripted HTTP/2 server on x/net's Framer (h2c with prior
// knowledge), for behaviour x/net's server does not offer on demand:
// REFUSED_STREAM, RST_STREAM with a chosen code, a GOAWAY with an error
// code, streams left unanswered. act decides each request's fate by its
// number (1-based, over all connections) and its connection's count.
type rawH2 struct {
	url string
	ln  net.Listener
	act func(n, onConn int64) rawAction

	conns     atomic.Int64
	requests  atomic.Int64 // HEADERS received
	answered  atomic.Int64
	refused   atomic.Int64
	resets    atomic.Int64
	hung      atomic.Int64
	goaways   atomic.Int64
	lostByGo  atomic.Int64  // streams at or below a GOAWAY's last id left unanswered
	cancelled atomic.Int64  // RST_STREAM(CANCEL) received
	done      chan struct{} // closed when the test ends: every connection closes
	wg        sync.WaitGroup
}

// rawAction is what rawH2 does with one request.
type rawAction struct {
	kind  string        // "answer" (200, body "ok"), "refuse", "reset", "hang", "goaway", "flood" (PRIORITY frames, never read again)
	code  http2.ErrCode // reset, goaway
	delay time.Duration // before acting (in the background: other streams go on)
}

func startRawH2(t testing.TB, act func(n, onConn int64) rawAction) *rawH2 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawH2{url: "http://" + ln.Addr().String() + "/", ln: ln, act: act, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	t.Cleanup(func() { close(s.done); ln.Close(); s.wg.Wait() })
	return s
}

func (s *rawH2) serve(c net.Conn) {
	defer c.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // the listener closing ends every connection
		select {
		case <-stop:
		case <-s.done:
			c.Close()
		}
	}()
	pre := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, pre); err != nil || string(pre) != http2.ClientPreface {
		return
	}
	var mu sync.Mutex // the framer's writes (delayed actions write from goroutines)
	fr := http2.NewFramer(c, c)
	var hbuf bytes.Buffer
	enc := hpack.NewEncoder(&hbuf)
	write := func(f func() error) {
		mu.Lock()
		defer mu.Unlock()
		f()
	}
	write(func() error { return fr.WriteSettings() })
	var onConn int64
	gone := false
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				write(fr.WriteSettingsAck)
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				write(func() error { return fr.WritePing(true, f.Data) })
			}
		case *http2.RSTStreamFrame:
			if f.ErrCode == http2.ErrCodeCancel {
				s.cancelled.Add(1)
			}
		case *http2.HeadersFrame:
			if gone {
				continue // above the GOAWAY's last stream: refused by it
			}
			id := f.StreamID
			n := s.requests.Add(1)
			onConn++
			a := s.act(n, onConn)
			do := func() {
				switch a.kind {
				case "answer":
					s.answered.Add(1)
					write(func() error {
						hbuf.Reset()
						enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
						enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "2"})
						if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hbuf.Bytes(), EndHeaders: true}); err != nil {
							return err
						}
						return fr.WriteData(id, true, []byte("ok"))
					})
				case "refuse":
					s.refused.Add(1)
					write(func() error { return fr.WriteRSTStream(id, http2.ErrCodeRefusedStream) })
				case "reset":
					s.resets.Add(1)
					write(func() error { return fr.WriteRSTStream(id, a.code) })
				case "hang":
					s.hung.Add(1)
				}
			}
			switch {
			case a.kind == "flood":
				mu.Lock()
				flood(c, priorityFlood) // the connection never reads again
				mu.Unlock()
				return
			case a.kind == "goaway":
				// This stream is the last the server takes, and it is
				// left unanswered; later ones are refused by the GOAWAY.
				// The server stops writing and reads on until the client
				// closes, so the client sees GOAWAY and FIN, not a reset.
				gone = true
				s.goaways.Add(1)
				s.lostByGo.Add(1)
				write(func() error { return fr.WriteGoAway(id, a.code, nil) })
				if tc, ok := c.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
			case a.delay > 0:
				time.AfterFunc(a.delay, do)
			default:
				do()
			}
		}
	}
}
