package gen

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/h1"
	"github.com/loadlab/loadlab/gen/result"
)

// Misbehaving-server suite: one server behaviour per case, each driven in
// closed loop and in open loop. A case asserts the exact error classes
// (the expected one counted, every other one zero), that Run returns a
// result, and that it ends on time: duration + timeout (the drain) + margin.

const (
	misDuration = time.Second
	// misTimeout is far above any healthy response on loopback, even with
	// the suite's runs side by side on 2 CPUs, so no case but the ones
	// meant to time out does.
	misTimeout = time.Second
	misRate    = 200
	misConns   = 4
	// misMargin covers start-up (probe, loop setup) and the timeout scan
	// granularity on a loaded 2-core machine.
	misMargin = 1500 * time.Millisecond
)

// misCase is one server behaviour and what the generator must make of it.
type misCase struct {
	name   string
	handle func(net.Conn)
	server *tls.Config // TLS server config; nil = plain TCP
	https  bool        // the generator speaks TLS (it may be a plain server)
	ca     string      // --ca for https
	class  string      // the one error class expected ("" = none)
	sample string      // substring of error_samples[class]
	ok     bool        // 2xx responses expected
	status string      // a non-2xx status expected instead
	engine string      // --tls-engine ("" = auto)
}

func misCases() []misCase {
	big := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", h1.MaxHeaderBytes+1024) + "\r\nContent-Length: 0\r\n\r\n"
	const chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	return []misCase{
		{name: "close mid-body", handle: replyThenClose("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789"),
			class: "closed", sample: "connection closed before the response was complete"},
		{name: "garbage status line", handle: replyThenHold("SSH-2.0-OpenSSH_9.2\r\n\r\n"),
			class: "parse", sample: "malformed status line"},
		{name: "never answers", handle: holdForever, class: "timeout", sample: "no complete response within the timeout"},
		{name: "headers over the limit", handle: replyThenHold(big), class: "parse", sample: "exceed 64 KiB (the parser's limit)"},
		// Linux: the server's RST reaches the client's socket as sk_err =
		// ECONNRESET (the socket is ESTABLISHED, not CLOSE_WAIT, since a
		// SO_LINGER 0 close sends no FIN). The generator's first syscall
		// that meets it (SO_ERROR after connect, write or read) returns
		// ECONNRESET and the socket is closed at once, so no later EPIPE or
		// EOF is seen: the class is exactly "reset", never "closed".
		{name: "reset on accept", handle: resetOnAccept, class: "reset", sample: "connection reset by peer"},
		{name: "drip 1 byte/100ms", handle: drip("HTTP/1.1 204\r\n\r\n", 100*time.Millisecond),
			class: "timeout", sample: "no complete response within the timeout"},
		{name: "http/1.0 close-delimited body", handle: replyThenClose("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nbody until the close"),
			ok: true},
		{name: "chunked bad size", handle: replyThenHold(chunked + "zz\r\nhello\r\n0\r\n\r\n"), class: "parse", sample: "malformed chunk size"},
		{name: "chunked missing CRLF", handle: replyThenHold(chunked + "2\r\nabcd\r\n0\r\n\r\n"), class: "parse", sample: "chunk data not followed by CRLF"},
		{name: "chunked huge size", handle: replyThenHold(chunked + "FFFFFFFFFFFFFFFFFFFF\r\n"), class: "parse", sample: "chunk size too large"},
		{name: "502 for everything", handle: reply("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 11\r\n\r\nbad gateway"), status: "502"},
	}
}

// tlsMisCases are the TLS cases, run with --tls-engine engine.
func tlsMisCases(t *testing.T, engine string) []misCase {
	ca, good, wrongName, expired := testCerts(t)
	serve := func(c net.Conn) {
		if tlsHandshake(c) == nil {
			reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")(c)
		}
	}
	mk := func(cert tls.Certificate, mod func(*tls.Config)) *tls.Config {
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
		if mod != nil {
			mod(cfg)
		}
		return cfg
	}
	cases := []misCase{
		{name: "tls valid (control)", server: mk(good, nil), handle: serve, https: true, ca: ca, ok: true},
		{name: "tls wrong name", server: mk(wrongName, nil), handle: serve, https: true, ca: ca,
			class: "tls", sample: "certificate is valid for 127.0.0.2, not 127.0.0.1"},
		{name: "tls expired", server: mk(expired, nil), handle: serve, https: true, ca: ca,
			class: "tls", sample: "certificate has expired"},
		// TLS 1.3: the client's handshake ends before the server checks the
		// client certificate, so the alert arrives on the first read of the
		// response. The server closes with the request unread, so a RST
		// follows the alert; Linux still hands the client the queued alert
		// first (tcp_recvmsg returns queued data before the socket error),
		// so the class is exactly tls, not reset.
		{name: "tls client cert required", server: mk(good, func(c *tls.Config) { c.ClientAuth = tls.RequireAnyClientCert }),
			handle: serve, https: true, ca: ca, class: "tls", sample: "certificate required"},
		{name: "tls no common version", server: mk(good, func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 }),
			handle: serve, https: true, ca: ca, class: "tls", sample: "protocol version not supported"},
		{name: "plain http on the tls port", handle: answerAnything("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
			https: true, ca: ca, class: "tls", sample: "does not look like a TLS handshake"},
	}
	for i := range cases {
		cases[i].engine = engine
	}
	return cases
}

// testCerts makes a local CA and a P-256 leaf for 127.0.0.1 with
// certs.Ensure in a directory removed after t and its subtests, and
// returns the CA file, the valid leaf, and two bad leaves signed by the same
// CA: one for another name, one expired.
func testCerts(t *testing.T) (caFile string, good, wrongName, expired tls.Certificate) {
	dir := t.TempDir()
	if _, err := certs.Ensure(certs.Options{Dir: dir, Keys: []certs.KeyType{certs.P256}}); err != nil {
		t.Fatal(err)
	}
	p := certs.PathsFor(dir, certs.P256)
	good, err := tls.LoadX509KeyPair(p.Cert, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	cap := certs.CAPathsFor(dir)
	ca, err := tls.LoadX509KeyPair(cap.Cert, cap.Key)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(ca.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	leaf := func(dns []string, ips []net.IP, from, to time.Time) tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: "loadlab test"},
			NotBefore: from, NotAfter: to, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: dns, IPAddresses: ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), ca.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	wrongName = leaf([]string{"wrong.example"}, []net.IP{net.IPv4(127, 0, 0, 2)}, now.Add(-time.Hour), now.Add(time.Hour))
	expired = leaf(nil, []net.IP{net.IPv4(127, 0, 0, 1)}, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
	return cap.Cert, good, wrongName, expired
}

func TestMisbehavingServers(t *testing.T) {
	runMisCases(t, append(misCases(), tlsMisCases(t, "")...))
}

// The TLS cases again with crypto/tls (the default above is the lean TLS
// 1.3 engine), after the others: running them all at once would overload
// a 2-core machine.
func TestMisbehavingServersTLSStd(t *testing.T) {
	runMisCases(t, tlsMisCases(t, "std"))
}

// misSideBySide is how many cases run at once. A case mostly waits (on
// its duration, on a server that holds or drips, on the drain): the 34
// cases of TestMisbehavingServers take 8.5 s of CPU in all, so six at a
// time keep 2 CPUs about two-thirds busy, and a healthy response stays
// far below misTimeout.
const misSideBySide = 6

// runMisCases runs each case in closed and in open loop, misSideBySide at
// a time (more than go test's -parallel, which counts CPUs).
func runMisCases(t *testing.T, cases []misCase) {
	slots := make(chan struct{}, misSideBySide)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, tc := range cases {
		for _, open := range []bool{false, true} {
			mode := "closed"
			if open {
				mode = "open"
			}
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				t.Run(tc.name+"/"+mode, func(t *testing.T) { runMisCase(t, tc, open) })
			}()
		}
	}
}

// runMisCase runs one case against its own server and checks what the
// generator made of it.
func runMisCase(t *testing.T, tc misCase, open bool) {
	srv := startServerTLS(t, tc.server, tc.handle)
	cfg := misConfig(srv, tc.https, tc.ca, open)
	cfg.TLS.Engine = tc.engine
	res := runOnTime(t, cfg)
	if tc.https && (res.TLS == nil || (tc.engine == "std") != (res.TLS.Engine == "crypto/tls")) {
		t.Errorf("--tls-engine %q: result tls %+v", tc.engine, res.TLS)
	}
	checkClasses(t, res, tc)
	if open {
		checkOpenAccounting(t, res, cfg)
	} else if res.Requests != res.OK+nonOK(res)+res.ErrorCount() {
		t.Errorf("requests %d != ok %d + non-2xx %d + errors %d", res.Requests, res.OK, nonOK(res), res.ErrorCount())
	}
}

// misConfig is the run every case uses: 1 s, timeout 1 s, 4 connections,
// and in open loop 200 requests/s.
func misConfig(srv *testServer, https bool, ca string, open bool) Config {
	cfg := Config{Connections: misConns, Duration: misDuration, Timeout: misTimeout, URL: srv.url("http")}
	if https {
		cfg.URL = srv.url("https")
		cfg.TLS.CAFile = ca
	}
	if open {
		cfg.Rate = misRate
	}
	return cfg
}

// runOnTime runs cfg and fails the test unless Run returns a result within
// duration + timeout + margin.
func runOnTime(t *testing.T, cfg Config, obs ...Observer) *result.Result {
	return runWithin(t, cfg, misMargin, obs...)
}

// checkClasses asserts the expected error class (and only it) and the
// status counts.
func checkClasses(t *testing.T, res *result.Result, tc misCase) {
	t.Helper()
	for name := range res.Errors { // every class, counted or not
		n := res.Errors[name]
		switch {
		case name == tc.class && n == 0:
			t.Errorf("errors.%s = 0, want > 0 (errors %v, samples %v)", name, res.Errors, res.ErrorSamples)
		case name != tc.class && n != 0:
			t.Errorf("errors.%s = %d, want 0 (errors %v, samples %v)", name, n, res.Errors, res.ErrorSamples)
		}
	}
	if tc.class != "" && !strings.Contains(res.ErrorSamples[tc.class], tc.sample) {
		t.Errorf("error_samples[%q] = %q, want it to contain %q", tc.class, res.ErrorSamples[tc.class], tc.sample)
	}
	if tc.ok != (res.OK > 0) {
		t.Errorf("ok = %d, want > 0: %v", res.OK, tc.ok)
	}
	for code, n := range res.Status {
		if code != tc.status && !(tc.ok && code[0] == '2') {
			t.Errorf("status %s counted %d times; want only %q (ok %v)", code, n, tc.status, tc.ok)
		}
	}
	if tc.status != "" && (res.Status[tc.status] == 0 || res.OK != 0) {
		t.Errorf("status %v, ok %d: want only %s responses", res.Status, res.OK, tc.status)
	}
}

// checkOpenAccounting asserts that in open loop every intended request of
// the schedule ends in exactly one counted outcome: a response (2xx or not)
// or an error class (dropped from the full pending queue, and whatever was
// still queued or in flight when the drain ended as timeout). The schedule
// does not wait for the server: rate x duration requests fall due whatever
// it does.
func checkOpenAccounting(t *testing.T, res *result.Result, cfg Config) {
	t.Helper()
	g := res.Generator
	due := uint64(cfg.Rate * cfg.Duration.Seconds())
	if res.Requests != due {
		t.Errorf("requests %d, want the %d of the schedule", res.Requests, due)
	}
	if got := res.OK + nonOK(res) + res.ErrorCount(); got != res.Requests {
		t.Errorf("ok %d + non-2xx %d + errors %d = %d, want requests %d", res.OK, nonOK(res), res.ErrorCount(), got, res.Requests)
	}
	if g.Dropped != res.Errors["dropped"] {
		t.Errorf("generator.dropped %d != errors.dropped %d", g.Dropped, res.Errors["dropped"])
	}
	if uint64(g.Unfinished) > res.Errors["timeout"] {
		t.Errorf("unfinished %d are not all in errors.timeout (%d)", g.Unfinished, res.Errors["timeout"])
	}
	if g.Unfinished > int64(g.MaxPending+cfg.Connections) {
		t.Errorf("unfinished %d > max pending %d + connections %d", g.Unfinished, g.MaxPending, cfg.Connections)
	}
	if n := res.CorrectedHist.TotalCount(); uint64(n) != res.Requests {
		t.Errorf("corrected histogram holds %d values, want one per request (%d)", n, res.Requests)
	}
}

func nonOK(res *result.Result) uint64 {
	var n uint64
	for code, v := range res.Status {
		if code[0] != '2' {
			n += v
		}
	}
	return n
}

// TestNeverAnswersOpenLoop checks that the open-loop schedule keeps going
// while no response ever comes: with a small pending queue the requests due
// beyond it are dropped, not delayed, and none of this waits on the server.
func TestNeverAnswersOpenLoop(t *testing.T) {
	t.Parallel()
	srv := startServer(t, holdForever)
	cfg := misConfig(srv, false, "", true)
	cfg.MaxPending, cfg.Duration = 50, 2*time.Second // the bounds below are for 2 s
	res := runOnTime(t, cfg)
	for name := range res.Errors { // every class, counted or not
		if n := res.Errors[name]; n != 0 && name != "timeout" && name != "dropped" {
			t.Errorf("errors.%s = %d, want only timeouts and drops", name, n)
		}
	}
	checkOpenAccounting(t, res, cfg)
	g := res.Generator
	if g.MaxPending != 50 {
		t.Errorf("max_pending %d, want 50", g.MaxPending)
	}
	// 4 connections, each failing after 1 s: at most 4 x (3 s / 1 s)
	// requests ever get a connection; of the other ~390 due, the queue holds
	// the last 50 (timed out when the drain ends), the rest are evicted.
	if g.Dropped < 300 || g.Dropped > 400-50 {
		t.Errorf("dropped %d, want 300..350 of the 400 due requests (pending capped at 50)", g.Dropped)
	}
	if g.LateSends == 0 {
		t.Error("late_sends 0: requests that waited for a connection must count as late")
	}
}

// TestDripCompletesWithLongTimeout is the drip server with a timeout longer
// than its 1.6 s response: slow, but every response is a success, and the
// latency says how slow.
func TestDripCompletesWithLongTimeout(t *testing.T) {
	t.Parallel()
	srv := startServer(t, drip("HTTP/1.1 204\r\n\r\n", 100*time.Millisecond))
	cfg := Config{Connections: 2, Duration: misDuration, Timeout: 5 * time.Second, URL: srv.url("http")}
	res := runOnTime(t, cfg)
	checkClasses(t, res, misCase{ok: true})
	if res.Latency.P50 < 1_500_000 {
		t.Errorf("latency p50 %d µs, want >= 1.5 s (16 bytes at 100 ms each)", res.Latency.P50)
	}
	if res.Generator.Unfinished != 0 {
		t.Errorf("unfinished %d: the drain must wait for slow responses up to --timeout", res.Generator.Unfinished)
	}
}
