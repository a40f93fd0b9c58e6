package gen

import (
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/tlsservers"
)

// Interop of the lean TLS 1.3 implementation with real servers: nginx, HAProxy and
// h2o (OpenSSL) and Caddy (Go), each with P-256, RSA 2048 and RSA 4096
// certificates and each TLS 1.3 cipher suite (the client offers one, so
// the server must pick it); a server limited to P-256 (a HelloRetryRequest
// for the client's X25519 share); a certificate from another CA (--ca: a
// tls error per handshake; --insecure: works); crypto/tls as a control.
// Every body is checked against its SHA-256. The loadlab serve interop is
// cmd/loadlab's TestGenTLSPerKeyType.
func TestLeanInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	dir := testutil.CertDir(t)
	wrongCA := testutil.OtherCA(t)
	sum := sha256.Sum256(tlsservers.Body1k())
	run := func(t *testing.T, s *tlsservers.Server, mod func(*Config)) *result.Result {
		t.Helper()
		cfg := Config{URL: s.URL(), Connections: 2, Duration: 300 * time.Millisecond, Timeout: 5 * time.Second,
			NewConn: true, VerifySHA256: sum[:]}
		mod(&cfg)
		return runOnTime(t, cfg)
	}
	ok := func(t *testing.T, what string, res *result.Result) {
		t.Helper()
		if res.OK == 0 || res.ErrorCount() != 0 || res.Handshakes != res.Requests {
			t.Fatalf("%s: ok %d of %d requests, %d handshakes, errors %v %v", what, res.OK, res.Requests, res.Handshakes, res.Errors, res.ErrorSamples)
		}
	}
	for _, kind := range tlsservers.All {
		t.Run(string(kind), func(t *testing.T) {
			// Servers side by side, two at a time: each checks answers, not times.
			t.Parallel()
			if tlsservers.Binary(kind) == "" {
				t.Skipf("%s is not installed: run scripts/install-proxies.sh", kind)
			}
			for _, key := range []certs.KeyType{certs.P256, certs.RSA2048, certs.RSA4096} {
				p := certs.PathsFor(dir, key)
				s := tlsservers.Start(t, kind, tlsservers.Options{Cert: p})
				for _, suite := range []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"} {
					res := run(t, s, func(c *Config) { c.TLS.CAFile = p.CA; c.TLS.Ciphers = []string{suite} })
					ok(t, string(key)+" "+suite, res)
					if i := res.TLS; i.Engine != "lean" || i.Cipher != suite || i.ServerKey != key.ServerKeyName() || i.Curve != "x25519" || i.Version != "TLS 1.3" {
						t.Fatalf("%s %s: tls %+v", key, suite, *i)
					}
				}
				if key != certs.P256 {
					continue
				}
				res := run(t, s, func(c *Config) { c.TLS.CAFile = wrongCA })
				if res.OK != 0 || res.Requests == 0 || res.Errors["tls"] != res.Requests ||
					!strings.Contains(res.ErrorSamples["tls"], "certificate signed by unknown authority") {
					t.Fatalf("wrong CA: ok %d of %d, errors %v %v", res.OK, res.Requests, res.Errors, res.ErrorSamples)
				}
				ok(t, "insecure", run(t, s, func(c *Config) { c.TLS.Insecure = true }))
				ok(t, "fresh key share", run(t, s, func(c *Config) { c.TLS.CAFile = p.CA; c.TLS.FreshKeyShare = true }))
				res = run(t, s, func(c *Config) { c.TLS.CAFile = p.CA; c.TLS.Engine = "std" })
				ok(t, "crypto/tls", res)
				if res.TLS.Engine != "crypto/tls" {
					t.Fatalf("--tls-engine std: tls %+v", *res.TLS)
				}
			}
			if !tlsservers.CanP256Only(kind) {
				return
			}
			p := certs.PathsFor(dir, certs.P256)
			s := tlsservers.Start(t, kind, tlsservers.Options{Cert: p, P256Only: true})
			res := run(t, s, func(c *Config) { c.TLS.CAFile = p.CA; c.TLS.Curves = []string{"x25519", "p256"} })
			ok(t, "HelloRetryRequest", res)
			if res.TLS.Curve != "p256" {
				t.Fatalf("P-256-only server: curve %q, want p256 after a HelloRetryRequest", res.TLS.Curve)
			}
		})
	}
}
