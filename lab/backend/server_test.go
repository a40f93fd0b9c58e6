package backend

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFixedBodiesHTTP(t *testing.T) {
	s := startTest(t, Config{})
	c := plainClient()
	for _, tc := range []struct{ path, ctype string }{
		{"/1k", "application/json"}, {"/100k", "application/octet-stream"}, {"/1m", "application/octet-stream"},
	} {
		for range 2 { // same bytes every time
			resp, body := get(t, c, s.URL()+tc.path)
			if resp.StatusCode != 200 || !bytes.Equal(body, Body(tc.path)) {
				t.Fatalf("%s: status %d, %d bytes; want 200 and the exact body", tc.path, resp.StatusCode, len(body))
			}
			if resp.ContentLength != int64(len(body)) || resp.Header.Get("Content-Type") != tc.ctype {
				t.Fatalf("%s: Content-Length %d Content-Type %q", tc.path, resp.ContentLength, resp.Header.Get("Content-Type"))
			}
			if resp.Header.Get("Server") != "" {
				t.Errorf("%s: unexpected Server header %q", tc.path, resp.Header.Get("Server"))
			}
		}
	}
}

func TestHeadHasLengthNoBody(t *testing.T) {
	s := startTest(t, Config{})
	resp, err := plainClient().Head(s.URL() + "/1m")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != Size1M {
		t.Fatalf("HEAD /1m: status %d length %d", resp.StatusCode, resp.ContentLength)
	}
}

func TestChunkedIsReallyChunked(t *testing.T) {
	s := startTest(t, Config{})
	_, head, br := rawExchange(t, s.Addr(), "GET /chunked HTTP/1.1\r\nHost: t\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200") || !strings.Contains(head, "\r\nTransfer-Encoding: chunked\r\n") {
		t.Fatalf("head is not a chunked 200:\n%s", head)
	}
	if strings.Contains(strings.ToLower(head), "content-length") {
		t.Fatalf("chunked response carries Content-Length:\n%s", head)
	}
	var body []byte
	chunks := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read chunk size: %v", err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("bad chunk size line %q", line)
		}
		if n == 0 {
			if end, _ := br.ReadString('\n'); end != "\r\n" {
				t.Fatalf("bad last-chunk terminator %q", end)
			}
			break
		}
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			t.Fatal(err)
		}
		if string(chunk[n:]) != "\r\n" {
			t.Fatal("chunk not followed by CRLF")
		}
		body = append(body, chunk[:n]...)
		chunks++
	}
	if chunks < 2 || !bytes.Equal(body, body1k) {
		t.Fatalf("%d chunks, %d bytes; want several chunks carrying the 1k body", chunks, len(body))
	}
}

func TestCloseSendsConnectionClose(t *testing.T) {
	s := startTest(t, Config{})
	_, head, br := rawExchange(t, s.Addr(), "GET /close HTTP/1.1\r\nHost: t\r\n\r\n")
	if !strings.Contains(head, "\r\nConnection: close\r\n") || !strings.Contains(head, "\r\nContent-Length: 1024\r\n") {
		t.Fatalf("missing Connection: close or length:\n%s", head)
	}
	rest, err := io.ReadAll(br) // returns only when the server closes
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rest, body1k) {
		t.Fatalf("got %d bytes after the head, want the 1k body then EOF", len(rest))
	}
}

func TestEcho(t *testing.T) {
	s := startTest(t, Config{})
	c, head, br := rawExchange(t, s.Addr(),
		"GET /echo?a=1&b=two HTTP/1.1\r\nHost: example.test\r\nX-Test: hello world\r\nAccept: */*\r\n\r\n")
	n, err := strconv.Atoi(headerValue(head, "Content-Length"))
	if err != nil || !strings.Contains(head, "Content-Type: text/plain") {
		t.Fatalf("bad echo head:\n%s", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	want := []string{
		"GET /echo?a=1&b=two HTTP/1.1",
		"RemoteAddr: " + c.LocalAddr().String(),
	}
	if len(lines) < 2 || lines[0] != want[0] || lines[1] != want[1] {
		t.Fatalf("echo head lines %q, want %q", lines, want)
	}
	for _, h := range []string{"Host: example.test", "X-Test: hello world", "Accept: */*"} {
		if !contains(lines[2:], h) {
			t.Errorf("echo lacks %q in %q", h, lines)
		}
	}
}

func TestStatusAndErrors(t *testing.T) {
	s := startTest(t, Config{})
	c := plainClient()
	for _, tc := range []struct {
		path   string
		status int
		body   string
	}{
		{"/status/418", 418, "418 I'm a teapot\n"},
		{"/status/503", 503, "503 Service Unavailable\n"},
		{"/status/204", 204, ""},
		{"/status/99", 400, ""},
		{"/delay/never", 400, ""},
		{"/nope", 404, notFoundBody},
	} {
		resp, body := get(t, c, s.URL()+tc.path)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d", tc.path, resp.StatusCode, tc.status)
		}
		if tc.body != "" && string(body) != tc.body {
			t.Errorf("%s: body %q, want %q", tc.path, body, tc.body)
		}
		if tc.status == 204 && len(body) != 0 {
			t.Errorf("%s: 204 with a body %q", tc.path, body)
		}
	}
}

func TestDelay(t *testing.T) {
	s := startTest(t, Config{})
	t0 := time.Now()
	resp, body := get(t, plainClient(), s.URL()+"/delay/60ms")
	if el := time.Since(t0); el < 60*time.Millisecond {
		t.Fatalf("/delay/60ms answered after %s", el)
	}
	if resp.StatusCode != 200 || !bytes.Equal(body, body1k) {
		t.Fatalf("status %d, %d bytes", resp.StatusCode, len(body))
	}
}

func TestStatsCountsAcceptsAndRequests(t *testing.T) {
	s := startTest(t, Config{})
	for range 3 {
		c := plainClient() // a fresh transport: a new TCP connection each
		if resp, _ := get(t, c, s.URL()+"/1k"); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		c.CloseIdleConnections()
	}
	waitFor(t, func() bool { return s.Stats().Open == 0 }, "all connections closed")
	if st := s.Stats(); !reflect.DeepEqual(st, Stats{Accepted: 3, Open: 0, Requests: 3}) {
		t.Fatalf("Stats() = %+v, want accepted 3, open 0, requests 3", st)
	}
	resp, body := get(t, plainClient(), s.URL()+"/_stats")
	var st Stats
	if err := json.Unmarshal(body, &st); err != nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("/_stats: %v, %q", err, body)
	}
	// The /_stats request's own connection is counted; the request is not.
	if !reflect.DeepEqual(st, Stats{Accepted: 4, Open: 1, Requests: 3}) {
		t.Fatalf("/_stats = %+v, want accepted 4, open 1, requests 3", st)
	}
}

// TestNamedBackends: three named backends in one server: each listener
// answers as its own app (X-Loadlab-Backend), counts its requests apart
// (Stats.Apps, /_stats "apps"), and the counts add up to Requests.
func TestNamedBackends(t *testing.T) {
	s := startTest(t, Config{Apps: []string{"127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"}})
	addrs := s.Addrs()
	if len(addrs) != 3 || addrs[0] != s.Addr() {
		t.Fatalf("Addrs() = %v, want three with Addr() (%s) first", addrs, s.Addr())
	}
	c := plainClient()
	for i, a := range addrs {
		for range i + 1 { // app01 once, app02 twice, app03 three times
			resp, body := get(t, c, "http://"+a+"/1k")
			if got, want := resp.Header.Get(AppHeader), AppName(i+1); got != want || resp.StatusCode != 200 || !bytes.Equal(body, body1k) {
				t.Fatalf("GET %s/1k: %s %s=%q, %d bytes; want 200 from %s with the 1k body", a, resp.Status, AppHeader, got, len(body), want)
			}
		}
	}
	if st := s.Stats(); st.Requests != 6 || !reflect.DeepEqual(st.Apps, []uint64{1, 2, 3}) {
		t.Fatalf("Stats() = %+v, want requests 6, apps [1 2 3]", st)
	}
	_, body := get(t, c, "http://"+addrs[2]+"/_stats")
	var st Stats
	if err := json.Unmarshal(body, &st); err != nil || !reflect.DeepEqual(st.Apps, []uint64{1, 2, 3}) {
		t.Fatalf("/_stats = %s (%v), want apps [1, 2, 3]", body, err)
	}
	// One backend, unnamed: no header, no apps.
	one := startTest(t, Config{})
	resp, _ := get(t, c, one.URL()+"/1k")
	if h := resp.Header.Get(AppHeader); h != "" || one.Stats().Apps != nil {
		t.Errorf("one unnamed backend: %s %q, apps %v; want neither", AppHeader, h, one.Stats().Apps)
	}
}

func TestKeepAliveReusesConnection(t *testing.T) {
	s := startTest(t, Config{})
	c := plainClient()
	for range 5 {
		get(t, c, s.URL()+"/1k")
	}
	if st := s.Stats(); st.Accepted != 1 || st.Requests != 5 {
		t.Fatalf("Stats() = %+v, want 1 connection for 5 requests", st)
	}
}

func TestStallHoldsRequestsUntilWindowEnd(t *testing.T) {
	const every, dur = 400 * time.Millisecond, 200 * time.Millisecond
	s := startTest(t, Config{StallEvery: every, StallFor: dur})
	c := plainClient()
	get(t, c, s.URL()+"/1k") // open the keep-alive connection before the window

	winStart := s.StartedAt().Add(every)
	if time.Now().After(winStart) { // slow machine: use the next window
		winStart = winStart.Add(every * (time.Since(winStart)/every + 1)) //nolint:durationcheck // every * n with n a count (a Duration divided by a Duration)
	}
	winEnd := winStart.Add(dur)
	time.Sleep(time.Until(winStart.Add(50 * time.Millisecond)))

	var wg sync.WaitGroup
	for _, path := range []string{"/1k", "/echo"} {
		wg.Go(func() {
			resp, _ := get(t, c, s.URL()+path)
			done := time.Now()
			if resp.StatusCode != 200 {
				t.Errorf("%s: %s", path, resp.Status)
			}
			if done.Before(winEnd) {
				t.Errorf("%s answered %s before the window ended", path, winEnd.Sub(done))
			}
			// Tolerance for a busy machine; a request held into the next
			// window would be 400ms late.
			if late := done.Sub(winEnd); late > 300*time.Millisecond {
				t.Errorf("%s answered %s after the window ended", path, late)
			}
		})
	}
	wg.Wait()
}

func TestStatsNeverStalls(t *testing.T) {
	const every, dur = time.Second, 900 * time.Millisecond
	s := startTest(t, Config{StallEvery: every, StallFor: dur})
	winEnd := s.StartedAt().Add(every + dur)
	time.Sleep(time.Until(s.StartedAt().Add(every + 50*time.Millisecond)))
	resp, _ := get(t, plainClient(), s.URL()+"/_stats")
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if !time.Now().Before(winEnd) {
		t.Fatal("/_stats was held until the stall window ended")
	}
}

func TestCloseReleasesDelayedRequests(t *testing.T) {
	s, err := Start(Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		status int
		body   []byte
		err    error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := plainClient().Get(s.URL() + "/delay/10s")
		if err != nil {
			got <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- result{resp.StatusCode, b, err}
	}()
	waitFor(t, func() bool { return s.Stats().Requests == 1 }, "the delayed request to arrive")
	t0 := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("Close took %s with a 10s delay pending", el)
	}
	r := <-got
	if r.err != nil || r.status != 200 || !bytes.Equal(r.body, body1k) {
		t.Fatalf("released request: status %d, %d bytes, err %v", r.status, len(r.body), r.err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseCutsSilentConnections(t *testing.T) {
	s, err := Start(Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	s.closeGrace = 200 * time.Millisecond
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /1k HTTP/1.1\r\nHo") // half a request, never finished
	waitFor(t, func() bool { return s.Stats().Accepted == 1 }, "the connection to be accepted")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if st := s.Stats(); st.Open != 0 {
		t.Fatalf("open connections after Close: %d", st.Open)
	}
}

func TestStartErrors(t *testing.T) {
	s := startTest(t, Config{})
	if _, err := Start(Config{Listen: s.Addr()}); err == nil || !strings.Contains(err.Error(), "pick a free address") {
		t.Errorf("address in use: err %v", err)
	}
	if _, err := Start(Config{Listen: "127.0.0.1:0", TLSCert: "/nonexistent.pem", TLSKey: "/nonexistent.key"}); err == nil || !strings.Contains(err.Error(), "load TLS certificate") {
		t.Errorf("bad cert: err %v", err)
	}
	if _, err := Start(Config{Apps: []string{"127.0.0.1:0", s.Addr()}}); err == nil || !strings.Contains(err.Error(), "pick a free address") {
		t.Errorf("an app's address in use: err %v", err)
	}
	if _, err := Start(Config{Listen: "127.0.0.1:0", StallEvery: time.Second}); err == nil {
		t.Error("invalid config accepted")
	}
}

func headerValue(head, name string) string {
	for _, line := range strings.Split(head, "\r\n") {
		if k, v, ok := strings.Cut(line, ": "); ok && strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if l == s {
			return true
		}
	}
	return false
}

func waitFor(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCloseRightAfterStart(t *testing.T) {
	for range 20 {
		s, err := Start(Config{Listen: "127.0.0.1:0"})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- s.Close() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Close: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Close right after Start hangs")
		}
	}
}

// /ws answers an upgrade to WebSocket with 101, reports the two headers as
// they arrived and echoes on the upgraded connection; without both headers
// it answers 400 saying what it got.
func TestWebSocketUpgrade(t *testing.T) {
	s := startTest(t, Config{})
	c, head, br := rawExchange(t, s.Addr(), "GET /ws HTTP/1.1\r\nHost: bench.lab\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	for _, want := range []string{"HTTP/1.1 101 ", "X-Loadlab-Upgrade: websocket\r\n", "X-Loadlab-Connection: keep-alive, Upgrade\r\n", "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"} {
		if !strings.Contains(strings.ToLower(head), strings.ToLower(want)) {
			t.Errorf("upgrade answer lacks %q:\n%s", want, head)
		}
	}
	if strings.Contains(strings.ToLower(head), "content-length") {
		t.Errorf("101 with a Content-Length:\n%s", head)
	}
	if _, err := io.WriteString(c, "ping-loadlab\n"); err != nil {
		t.Fatal(err)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "ping-loadlab\n" {
		t.Errorf("echo on the upgraded connection: %q, %v", line, err)
	}
	// lighttpd's mod_proxy sends "Connection: close, upgrade": the
	// upgrade still goes through.
	c, head, br = rawExchange(t, s.Addr(), "GET /ws HTTP/1.1\r\nHost: bench.lab\r\nUpgrade: websocket\r\nConnection: close, upgrade\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 101 ") {
		t.Errorf("with close, upgrade: %s", head)
	}
	io.WriteString(c, "ping-close\n")
	if line, err := br.ReadString('\n'); err != nil || line != "ping-close\n" {
		t.Errorf("echo after Connection: close, upgrade: %q, %v\n%s", line, err, head)
	}
	for _, req := range []string{
		"GET /ws HTTP/1.1\r\nHost: bench.lab\r\nUpgrade: websocket\r\n\r\n",
		"GET /ws HTTP/1.1\r\nHost: bench.lab\r\nConnection: Upgrade\r\n\r\n",
	} {
		_, head, _ := rawExchange(t, s.Addr(), req)
		if !strings.HasPrefix(head, "HTTP/1.1 400 ") {
			t.Errorf("%q: %s, want 400", req, head)
		}
	}
}
