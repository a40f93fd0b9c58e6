package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/loadlab/loadlab/lab/backend"
)

func TestServeBadInputExits2(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--stall-every", "1s"},
		{"serve", "--stall-every", "1s", "--stall-for", "2s"},
		{"serve", "--h3"},
		{"serve", "--h2-max-streams", "4"},
		{"serve", "--h2", "--h2-max-streams", "-1"},
		{"serve", "--tls-cert", "x.pem"},
		{"serve", "--cpus", "zero"},
		{"serve", "--cpus", "4095"},
		{"serve", "--stall-for", "soon"},
		{"serve", "extra-arg"},
		{"serve", "--no-such-flag"},
	} {
		if code := runQuiet(t, args); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestServeStartFailureExits1(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if code := runQuiet(t, []string{"serve", "--listen", ln.Addr().String()}); code != exitRunError {
		t.Errorf("address in use: exit %d, want %d", code, exitRunError)
	}
	if code := runQuiet(t, []string{"serve", "--listen", "127.0.0.1:0", "--tls-cert", "/nonexistent.pem", "--tls-key", "/nonexistent.key"}); code != exitRunError {
		t.Errorf("bad certificate: exit %d, want %d", code, exitRunError)
	}
}

func TestRunServeServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &lineWriter{line: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(ctx, backend.Config{Listen: "127.0.0.1:0", StallEvery: time.Hour, StallFor: time.Minute}, w, nil)
	}()

	var line string
	select {
	case line = <-w.line:
	case err := <-errc:
		t.Fatalf("runServe returned early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no serving line")
	}
	if !strings.HasPrefix(line, "serving http://127.0.0.1:") || !strings.Contains(line, "(endpoints: /1k /100k /1m /echo") ||
		!strings.Contains(line, "stalls of 1m0s every 1h0m0s") || strings.Count(line, "\n") != 1 {
		t.Fatalf("serving line %q", line)
	}
	url := strings.Fields(line)[1]
	resp, err := http.Get(url + "/1k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, backend.Body("/1k")) {
		t.Fatalf("GET /1k: %d bytes", len(body))
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("runServe after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("runServe did not stop after cancel")
	}
}

// runQuiet runs the CLI with its output discarded and returns its exit
// status.
func runQuiet(t *testing.T, args []string) int {
	t.Helper()
	return execute(args, io.Discard, io.Discard)
}

// lineWriter hands the first complete line written to it to line.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line chan string
	sent bool
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.sent && bytes.Contains(w.buf.Bytes(), []byte("\n")) {
		w.sent = true
		w.line <- w.buf.String()
	}
	return len(p), nil
}

func TestRunServeH2C(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWriter{line: make(chan string, 1)}
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(ctx, backend.Config{Listen: "127.0.0.1:0", H2: true, H2MaxStreams: 8}, w, nil)
	}()
	var line string
	select {
	case line = <-w.line:
	case err := <-errc:
		t.Fatalf("runServe returned early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no serving line")
	}
	if !strings.Contains(line, "HTTP/2 (h2c with prior knowledge) on the same port") {
		t.Fatalf("serving line %q", line)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
	resp, err := c.Get(strings.Fields(line)[1] + "/1k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 2 || !bytes.Equal(body, backend.Body("/1k")) {
		t.Fatalf("h2c GET /1k: %s, %d bytes", resp.Proto, len(body))
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("runServe after cancel: %v", err)
	}
}

// The backend's errors name its Config fields; the CLI says its flags.
func TestServeErrorsNameFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--stall-every 1s":   "set both --stall-every and --stall-for, or neither",
		"--h3":               "--h3 requires --tls-cert and --tls-key",
		"--h2-max-streams 4": "--h2-max-streams needs --h2",
	} {
		var out, errb strings.Builder
		code := execute(append([]string{"serve"}, strings.Fields(args)...), &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), want) {
			t.Errorf("serve %s: exit %d, stderr %q, want exit 2 and %q", args, code, errb.String(), want)
		}
	}
}

// TestServeMetricsCountsRequests: serve --metrics-addr exposes the
// backend's own counters, and they move by exactly the requests sent.
func TestServeMetricsCountsRequests(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &lineWriter{line: make(chan string, 1)}
	eps := make(chan *metricsEndpoint, 1)
	srvs := make(chan *backend.Server, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- runServe(ctx, backend.Config{Listen: "127.0.0.1:0"}, w, func(s *backend.Server) (*metricsEndpoint, error) {
			mf := metricsFlags{addr: "127.0.0.1:0"}
			ep, err := mf.start(io.Discard, backendCollector{s: s, labels: map[string]string{"run": "t"}})
			eps <- ep
			srvs <- s
			return ep, err
		})
	}()
	var ep *metricsEndpoint
	select {
	case ep = <-eps:
	case err := <-errc:
		t.Fatalf("runServe: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no metrics endpoint")
	}
	s := <-srvs
	<-w.line
	scrape := func() string {
		resp, err := http.Get("http://" + ep.srv.Addr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if out := scrape(); !strings.Contains(out, `loadlab_backend_requests_total{run="t"} 0`) {
		t.Fatalf("before any request:\n%s", out)
	}
	for i := 0; i < 7; i++ {
		resp, err := http.Get("http://" + s.Addr() + "/1k")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	out := scrape()
	if !strings.Contains(out, `loadlab_backend_requests_total{run="t"} 7`) || !strings.Contains(out, `loadlab_backend_accepted_total{run="t"}`) {
		t.Fatalf("after 7 requests:\n%s", out)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}
