package gen

import (
	"crypto/sha256"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/tlsservers"
)

// HTTP/2 interop with real servers: nginx, HAProxy, h2o and Caddy, over
// TLS (ALPN h2) and h2c with prior knowledge. Every body is checked
// against its SHA-256; every request the run owed is answered. Where the
// server can: a limit of 3 concurrent streams (below the run's 10) is
// honoured, and a limit of requests per connection (nginx's
// keepalive_requests: GOAWAY) costs no request; nginx's 444 over HTTP/2
// resets the stream.
func TestH2Interop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	dir := testutil.CertDir(t)
	p := certs.PathsFor(dir, certs.P256)
	sum := sha256.Sum256(tlsservers.Body1k())
	run := func(t *testing.T, url string, mod func(*Config)) *result.Result {
		t.Helper()
		cfg := Config{URL: url, HTTP2: true, Connections: 2, Streams: 10, Duration: 500 * time.Millisecond, Timeout: 5 * time.Second,
			VerifySHA256: sum[:], TLS: TLSOptions{CAFile: p.CA}}
		if mod != nil {
			mod(&cfg)
		}
		res := runOnTime(t, cfg)
		if res.Protocol != "h2" || res.H2 == nil {
			t.Fatalf("protocol %q h2 %v", res.Protocol, res.H2)
		}
		return res
	}
	allOK := func(t *testing.T, what string, res *result.Result) {
		t.Helper()
		if res.OK == 0 || res.ErrorCount() != 0 || res.Requests != res.OK || res.BytesRead != res.OK*1024 {
			t.Fatalf("%s: ok %d of %d requests, %d bytes, errors %v %v", what, res.OK, res.Requests, res.BytesRead, res.Errors, res.ErrorSamples)
		}
	}
	for _, kind := range tlsservers.All {
		t.Run(string(kind), func(t *testing.T) {
			// Servers side by side, two at a time: each checks answers, not times.
			t.Parallel()
			if tlsservers.Binary(kind) == "" {
				t.Skipf("%s is not installed: run scripts/install-proxies.sh", kind)
			}
			s := tlsservers.Start(t, kind, tlsservers.Options{Cert: p, HTTP2: true})
			for _, engine := range []string{"lean", "std"} {
				res := run(t, s.URL(), func(c *Config) { c.TLS.Engine = engine })
				allOK(t, "h2 "+engine, res)
				// One handshake per connection: the two the run opened, and
				// one more after each GOAWAY (nginx: keepalive_requests 1000)
				// except when the GOAWAY came as the run stopped: then the
				// slot has no request left to reconnect for (at most one
				// such GOAWAY per connection).
				g := res.H2.GoAways
				if res.TLS == nil || res.TLS.ALPN != "h2" || res.Handshakes > 2+g || res.Handshakes+2 < 2+g {
					t.Fatalf("h2 %s: tls %+v, %d handshakes, %d goaways", engine, res.TLS, res.Handshakes, res.H2.GoAways)
				}
			}
			allOK(t, "h2c", run(t, s.H2CURL(), nil))
			res := run(t, s.URL(), func(c *Config) { c.Rate = 400; c.Duration = time.Second })
			allOK(t, "open loop", res)
			if res.Requests != 400 {
				t.Errorf("open loop: %d requests, want the 400 of the schedule", res.Requests)
			}
			if tlsservers.CanH2MaxStreams(kind) {
				s := tlsservers.Start(t, kind, tlsservers.Options{Cert: p, HTTP2: true, H2MaxStreams: 3})
				res := run(t, s.URL(), nil)
				allOK(t, "max streams 3", res)
				// Never above the limit: nothing refused but what a
				// GOAWAY (keepalive_requests) left above its last stream,
				// at most the 3 in flight each time.
				if res.H2.ServerMaxStreams != 3 || res.H2.Refused > 3*res.H2.GoAways {
					t.Errorf("max streams 3: server_max_streams %d, refused %d after %d goaways", res.H2.ServerMaxStreams, res.H2.Refused, res.H2.GoAways)
				}
			}
			if tlsservers.CanMaxRequests(kind) {
				s := tlsservers.Start(t, kind, tlsservers.Options{Cert: p, HTTP2: true, MaxRequests: 100})
				for _, url := range []string{s.URL(), s.H2CURL()} {
					res := run(t, url, nil)
					allOK(t, "keepalive_requests 100", res)
					if want := res.OK / 100; res.H2.GoAways < want-2 || res.H2.GoAways > want || res.H2.GoAwayCodes["NO_ERROR"] != res.H2.GoAways {
						t.Errorf("keepalive_requests 100, %d responses: %d goaways %v, want about %d", res.OK, res.H2.GoAways, res.H2.GoAwayCodes, want)
					}
				}
			}
			if kind == tlsservers.Nginx {
				res := run(t, "http://"+s.H2CAddr+"/reset", func(c *Config) { c.VerifySHA256 = nil })
				if res.OK != 0 || res.Errors["stream_reset"] == 0 || res.Errors["stream_reset"] != res.Requests {
					t.Errorf("nginx 444: ok %d of %d, errors %v %v, reset codes %v", res.OK, res.Requests, res.Errors, res.ErrorSamples, res.H2.ResetCodes)
				}
			}
		})
	}
}
