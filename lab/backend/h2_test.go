package backend

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/loadlab/loadlab/gen/h2"
)

// h2cClient is a net/http client that speaks h2c with prior knowledge.
func h2cClient() *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
}

func TestH2CPriorKnowledgeSameEndpoints(t *testing.T) {
	s := startTest(t, Config{H2: true})
	c := h2cClient()
	for _, path := range []string{"/1k", "/100k", "/1m", "/chunked", "/delay/5ms"} {
		resp, body := get(t, c, s.URL()+path)
		want := Body(path)
		if want == nil {
			want = body1k
		}
		if resp.ProtoMajor != 2 || resp.StatusCode != 200 || !bytes.Equal(body, want) {
			t.Fatalf("h2c %s: %s status %d, %d bytes", path, resp.Proto, resp.StatusCode, len(body))
		}
	}
	if resp, body := get(t, c, s.URL()+"/status/418"); resp.StatusCode != 418 || string(body) != "418 I'm a teapot\n" {
		t.Fatalf("h2c /status/418: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, c, s.URL()+"/missing"); resp.StatusCode != 404 {
		t.Fatalf("h2c /missing: %d", resp.StatusCode)
	}
	resp, body := get(t, c, s.URL()+"/echo?x=1")
	lines := strings.Split(string(body), "\n")
	if resp.StatusCode != 200 || lines[0] != "GET /echo?x=1 HTTP/2.0" || !contains(lines, "Host: "+s.Addr()) {
		t.Fatalf("h2c echo:\n%s", body)
	}
	// HTTP/1.1 on the same port still works.
	if resp, body := get(t, plainClient(), s.URL()+"/1k"); resp.ProtoMajor != 1 || !bytes.Equal(body, body1k) {
		t.Fatalf("HTTP/1.1 beside h2c: %s, %d bytes", resp.Proto, len(body))
	}
	if st := s.Stats(); st.Requests != 9 || st.Accepted != 2 {
		t.Fatalf("Stats() = %+v, want 9 requests over 2 connections", st)
	}
}

func TestH2OverTLSByALPN(t *testing.T) {
	cert, key, pool := testCert(t)
	s := startTest(t, Config{TLSCert: cert, TLSKey: key, H2: true})
	h2c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		ForceAttemptHTTP2: true, TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	for _, path := range []string{"/1k", "/1m", "/chunked"} {
		resp, body := get(t, h2c, s.URL()+path)
		want := Body(path)
		if want == nil {
			want = body1k
		}
		if resp.ProtoMajor != 2 || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" || !bytes.Equal(body, want) {
			t.Fatalf("TLS %s: %s, %d bytes", path, resp.Proto, len(body))
		}
	}
	// A client that offers only http/1.1 gets fasthttp on the same port.
	h1 := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}},
	}}
	if resp, body := get(t, h1, s.URL()+"/1k"); resp.ProtoMajor != 1 || !bytes.Equal(body, body1k) {
		t.Fatalf("TLS HTTP/1.1 beside h2: %s, %d bytes", resp.Proto, len(body))
	}
	// Without H2 the TLS listener does not offer h2.
	plain := startTest(t, Config{TLSCert: cert, TLSKey: key})
	if resp, _ := get(t, h2c, plain.URL()+"/1k"); resp.ProtoMajor != 1 {
		t.Fatalf("without H2: negotiated %s", resp.Proto)
	}
}

// h2Events records what gen/h2's connection reports.
type h2Events struct {
	status  []int
	bytes   int64
	done    int
	goaways int
	resets  int
}

func (e *h2Events) Response(_, status int)       { e.status = append(e.status, status) }
func (e *h2Events) Body(_ int, b []byte)         { e.bytes += int64(len(b)) }
func (e *h2Events) Done(int)                     { e.done++ }
func (e *h2Events) Reset(int, http2.ErrCode)     { e.resets++ }
func (e *h2Events) Refused(int, http2.ErrCode)   { e.resets++ }
func (e *h2Events) GoAway(uint32, http2.ErrCode) { e.goaways++ }
func (e *h2Events) finished(total int) bool      { return e.done+e.resets >= total }

// h2Run sends total requests for path over one h2c connection with gen/h2
// (streams at once) until they end or the server closes; it returns the
// events and the Conn.
func h2Run(t *testing.T, addr, path string, streams, total int) (*h2Events, *h2.Conn) {
	t.Helper()
	tmpl, err := h2.NewTemplate(h2.Request{Scheme: "http", Authority: addr, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ev := &h2Events{}
	c, err := h2.NewConn(h2.Config{MaxStreams: streams}, tmpl, ev)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 64<<10)
	started := 0
	for !ev.finished(total) {
		for c.Free() > 0 && started < total {
			c.Start()
			started++
		}
		if _, err := nc.Write(c.Pending()); err != nil {
			t.Fatalf("write: %v", err)
		}
		c.Wrote(len(c.Pending()))
		n, err := nc.Read(buf)
		if ferr := c.Feed(buf[:n]); ferr != nil {
			t.Fatalf("Feed: %v", ferr)
		}
		if err == io.EOF || (c.Closing() && c.Active() == 0) {
			break
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	return ev, c
}

func TestH2WithGeneratorConn(t *testing.T) {
	s := startTest(t, Config{H2: true, H2MaxStreams: 3})
	ev, c := h2Run(t, s.Addr(), "/1k", 10, 100)
	if ev.done != 100 || ev.bytes != 100*Size1K || c.Limit() != 3 {
		t.Fatalf("done %d, %d body bytes, stream limit %d (want 100, %d, the advertised 3)", ev.done, ev.bytes, c.Limit(), 100*Size1K)
	}
	// /close over HTTP/2: the response, then GOAWAY.
	ev, c = h2Run(t, s.Addr(), "/close", 1, 5)
	if ev.done != 1 || ev.goaways == 0 || !c.Closing() {
		t.Fatalf("/close: done %d goaways %d closing %v, want one response then GOAWAY", ev.done, ev.goaways, c.Closing())
	}
	if st := s.Stats(); st.Requests != 101 {
		t.Fatalf("Stats() = %+v, want 101 requests", st)
	}
}

func TestH2CloseReleasesHeldRequests(t *testing.T) {
	s, err := Start(Config{Listen: "127.0.0.1:0", H2: true})
	if err != nil {
		t.Fatal(err)
	}
	c := h2cClient()
	errc := make(chan error, 1)
	go func() {
		resp, err := c.Get(s.URL() + "/delay/10s")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	for s.Stats().Requests == 0 {
		time.Sleep(time.Millisecond)
	}
	// An idle connection that never sends a byte must not hold Close up.
	idle, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("Close took %v with a /delay/10s request held", el)
	}
	select {
	case <-errc: // answered early or cut: either way not held for 10s
	case <-time.After(5 * time.Second):
		t.Fatal("the held request is still waiting after Close")
	}
	if st := s.Stats(); st.Open != 0 {
		t.Fatalf("Stats() after Close = %+v, want no open connections", st)
	}
}

func TestH2MaxStreamsNeedsH2(t *testing.T) {
	if err := (Config{H2MaxStreams: 4}).Validate(); err == nil || !strings.Contains(err.Error(), "H2MaxStreams needs H2") {
		t.Fatalf("Validate: %v", err)
	}
}
