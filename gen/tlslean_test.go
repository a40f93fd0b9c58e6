package gen

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/result"
)

func TestLeanEngineChoice(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Config)
		lean bool
		err  string // substring of the usage error
	}{
		{"default", func(*Config) {}, true, ""},
		{"lean", func(c *Config) { c.TLS.Engine = "lean" }, true, ""},
		{"std", func(c *Config) { c.TLS.Engine = "std" }, false, ""},
		{"p256 first", func(c *Config) { c.TLS.Curves = []string{"p256", "x25519"} }, true, ""},
		{"tls 1.2", func(c *Config) { c.TLS.Version = "1.2" }, false, ""},
		{"resume", func(c *Config) { c.TLS.Resume = true }, false, ""},
		{"preset", func(c *Config) { c.TLS.ClientHello = "chrome" }, false, ""},
		{"p384", func(c *Config) { c.TLS.Curves = []string{"p384"} }, false, ""},
		{"lean with resume", func(c *Config) { c.TLS.Engine = "lean"; c.TLS.Resume = true }, false, "TLS.Engine: lean does not apply with TLS.Resume"},
		{"lean with tls 1.2", func(c *Config) { c.TLS.Engine = "lean"; c.TLS.Version = "1.2" }, false, "does not apply with TLS.Version 1.2"},
		{"ciphers with std", func(c *Config) { c.TLS.Engine = "std"; c.TLS.Ciphers = []string{"aes128gcm"} }, false, "TLS.Ciphers: needs the lean"},
		{"ciphers with a preset", func(c *Config) { c.TLS.ClientHello = "firefox"; c.TLS.Ciphers = []string{"chacha20"} }, false, "TLS.Ciphers: needs the lean"},
		{"unknown cipher", func(c *Config) { c.TLS.Ciphers = []string{"rc4"} }, false, `unknown cipher suite "rc4"`},
		{"IANA cipher name", func(c *Config) { c.TLS.Ciphers = []string{"TLS_AES_256_GCM_SHA384"} }, true, ""},
		{"unknown engine", func(c *Config) { c.TLS.Engine = "boring" }, false, `TLS.Engine: unknown "boring"`},
		{"h3 new-conn default", func(c *Config) { c.HTTP3, c.NewConn = true, true }, true, ""},
		{"h3 keep-alive default", func(c *Config) { c.HTTP3 = true }, true, ""},
		{"h3 keep-alive std", func(c *Config) { c.HTTP3, c.TLS.Engine = true, "std" }, false, ""},
		{"h3 new-conn std", func(c *Config) { c.HTTP3, c.NewConn, c.TLS.Engine = true, true, "std" }, false, ""},
		{"h3 lean new-conn", func(c *Config) { c.HTTP3, c.NewConn, c.TLS.Engine = true, true, "lean" }, true, ""},
		{"h3 lean keep-alive", func(c *Config) { c.HTTP3, c.TLS.Engine = true, "lean" }, true, ""},
		{"h3 lean post", func(c *Config) {
			c.HTTP3, c.NewConn, c.TLS.Engine, c.Method, c.Body = true, true, "lean", "POST", []byte("x")
		}, false, "with a request body"},
		{"h3 lean head", func(c *Config) { c.HTTP3, c.NewConn, c.TLS.Engine, c.Method = true, true, "lean", "HEAD" }, true, ""},
		{"h3 lean headers", func(c *Config) {
			c.HTTP3, c.NewConn, c.TLS.Engine, c.Headers = true, true, "lean", []string{"X-A: b", "host: example.com"}
		}, true, ""},
		{"h3 lean long", func(c *Config) {
			c.HTTP3, c.NewConn, c.TLS.Engine, c.Headers = true, true, "lean", []string{"X-A: " + strings.Repeat("b", 900)}
		}, false, "a request over 900 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{URL: "https://127.0.0.1:1/"}
			tc.mod(&cfg)
			cfg.Defaults()
			p, err := cfg.Prepare()
			if tc.err != "" {
				if err == nil || !IsUsage(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Validate: %v, want a usage error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := run.NewTLSClient(p.spec)
			if err != nil {
				t.Fatal(err)
			}
			if (c.Lean != nil) != tc.lean {
				t.Fatalf("lean TLS implementation %v, want %v (why: %s)", c.Lean != nil, tc.lean, p.spec.TLS.LeanWhy)
			}
		})
	}
}

// leanTarget serves 200 "ok" over TLS with cfg.
func leanTarget(t *testing.T, cfg *tls.Config) *testServer {
	return startServerTLS(t, cfg, func(c net.Conn) {
		if tlsHandshake(c) == nil {
			reply("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")(c)
		}
	})
}

func leanRun(t *testing.T, srv *testServer, mod func(*Config)) *result.Result {
	t.Helper()
	cfg := Config{URL: srv.url("https"), Connections: 4, Duration: 400 * time.Millisecond, Timeout: 2 * time.Second, NewConn: true}
	mod(&cfg)
	return runOnTime(t, cfg)
}

// New connections per request on each engine and suite: every request is a
// full handshake, the result says which engine ran and how the key share
// was used.
func TestLeanNewConnResults(t *testing.T) {
	ca, good, _, _ := testCerts(t)
	srv := leanTarget(t, &tls.Config{Certificates: []tls.Certificate{good}})
	cases := []struct {
		name          string
		mod           func(*Config)
		engine, share string
		cipher, curve string
	}{
		{"default", func(*Config) {}, "lean", "reused", "", "x25519"},
		{"fresh", func(c *Config) { c.TLS.FreshKeyShare = true }, "lean", "fresh", "", "x25519"},
		{"std", func(c *Config) { c.TLS.Engine = "std" }, "crypto/tls", "fresh", "", "x25519"},
		{"p256", func(c *Config) { c.TLS.Curves = []string{"p256"} }, "lean", "reused", "", "p256"},
		{"aes128gcm", func(c *Config) { c.TLS.Ciphers = []string{"aes128gcm"} }, "lean", "reused", "TLS_AES_128_GCM_SHA256", "x25519"},
		{"aes256gcm", func(c *Config) { c.TLS.Ciphers = []string{"aes256gcm"} }, "lean", "reused", "TLS_AES_256_GCM_SHA384", "x25519"},
		{"chacha20", func(c *Config) { c.TLS.Ciphers = []string{"chacha20"} }, "lean", "reused", "TLS_CHACHA20_POLY1305_SHA256", "x25519"},
	}
	for _, tc := range cases {
		for _, verify := range []bool{true, false} {
			t.Run(tc.name+map[bool]string{true: "/ca", false: "/insecure"}[verify], func(t *testing.T) {
				t.Parallel() // checks what was negotiated and counted, not times
				res := leanRun(t, srv, func(c *Config) {
					if verify {
						c.TLS.CAFile = ca
					} else {
						c.TLS.Insecure = true
					}
					tc.mod(c)
				})
				if res.OK == 0 || res.ErrorCount() != 0 {
					t.Fatalf("ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
				}
				if res.Handshakes != res.Requests {
					t.Fatalf("%d handshakes for %d requests", res.Handshakes, res.Requests)
				}
				i := res.TLS
				if i.Engine != tc.engine || i.ClientKeyShare != tc.share || i.Version != "TLS 1.3" || i.Curve != tc.curve ||
					(tc.cipher != "" && i.Cipher != tc.cipher) || i.ServerKey != "ecdsa-p256" || i.ALPN != "" {
					t.Fatalf("tls %+v, want engine %s key share %s curve %s cipher %q", *i, tc.engine, tc.share, tc.curve, tc.cipher)
				}
			})
		}
	}
}

// Keep-alive connections: the first handshake of each is the lean one.
func TestLeanKeepAlive(t *testing.T) {
	ca, good, _, _ := testCerts(t)
	srv := leanTarget(t, &tls.Config{Certificates: []tls.Certificate{good}, NextProtos: []string{"http/1.1"}})
	res := leanRun(t, srv, func(c *Config) { c.NewConn = false; c.TLS.CAFile = ca })
	if res.OK < 10 || res.ErrorCount() != 0 || res.Handshakes > 4 || res.TLS.Engine != "lean" || res.TLS.ALPN != "http/1.1" {
		t.Fatalf("ok %d errors %v handshakes %d tls %+v", res.OK, res.Errors, res.Handshakes, res.TLS)
	}
}

// Go's server prefers P-256 and the client sends an X25519 share: a
// HelloRetryRequest switches the group; handshakes still complete.
func TestLeanHelloRetryRequest(t *testing.T) {
	ca, good, _, _ := testCerts(t)
	srv := leanTarget(t, &tls.Config{Certificates: []tls.Certificate{good}, CurvePreferences: []tls.CurveID{tls.CurveP256}})
	for _, fresh := range []bool{false, true} {
		res := leanRun(t, srv, func(c *Config) {
			c.TLS.CAFile = ca
			c.TLS.Curves = []string{"x25519", "p256"}
			c.TLS.FreshKeyShare = fresh
		})
		if res.OK == 0 || res.ErrorCount() != 0 || res.Handshakes != res.Requests || res.TLS.Curve != "p256" {
			t.Fatalf("fresh %v: ok %d errors %v %v handshakes %d tls %+v", fresh, res.OK, res.Errors, res.ErrorSamples, res.Handshakes, res.TLS)
		}
	}
	// Offering only X25519: the server has no group in common and says so.
	res := leanRun(t, srv, func(c *Config) { c.TLS.CAFile = ca })
	if res.OK != 0 || res.Errors["tls"] != res.Requests || !strings.Contains(res.ErrorSamples["tls"], "handshake failure") {
		t.Fatalf("no common group: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
}

// A certificate the CA did not sign: every handshake fails as tls with
// the verification error (--ca), and works with --insecure.
func TestLeanWrongCertificate(t *testing.T) {
	ca, _, _, _ := testCerts(t)
	_, other, _, _ := testCerts(t) // another CA's leaf
	srv := leanTarget(t, &tls.Config{Certificates: []tls.Certificate{other}})
	res := leanRun(t, srv, func(c *Config) { c.TLS.CAFile = ca })
	if res.OK != 0 || res.Requests == 0 || res.Errors["tls"] != res.Requests ||
		!strings.Contains(res.ErrorSamples["tls"], "tls: failed to verify certificate: x509: certificate signed by unknown authority") {
		t.Fatalf("--ca: ok %d requests %d errors %v %v", res.OK, res.Requests, res.Errors, res.ErrorSamples)
	}
	res = leanRun(t, srv, func(c *Config) { c.TLS.Insecure = true })
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("--insecure: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
}

// A server that answers the ClientHello with a malformed ServerHello (or
// an alert): every request is a tls error whose sample says what was
// wrong, the run ends on time, and nothing panics.
func TestLeanMalformedServer(t *testing.T) {
	cases := []struct {
		name   string
		answer []byte
		sample string
	}{
		{"short ServerHello", []byte{22, 3, 3, 0, 6, 2, 0, 0, 2, 3, 3}, "tls: malformed ServerHello"},
		{"TLS 1.2 ServerHello", append([]byte{22, 3, 3, 0, 42, 2, 0, 0, 38, 3, 3}, make([]byte, 32+1+2+1)...), "did not select TLS 1.3"},
		{"alert", []byte{21, 3, 3, 0, 2, 2, 40}, "remote error: tls: handshake failure"},
		{"oversized record", []byte{22, 3, 3, 0xff, 0xff}, "oversized record"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServer(t, func(c net.Conn) {
				hdr := make([]byte, 5)
				if _, err := io.ReadFull(c, hdr); err != nil {
					return
				}
				io.CopyN(io.Discard, c, int64(hdr[3])<<8|int64(hdr[4]))
				c.Write(tc.answer)
				io.Copy(io.Discard, c)
			})
			res := leanRun(t, srv, func(c *Config) { c.TLS.Insecure = true; c.Timeout = time.Second })
			if res.OK != 0 || res.Requests == 0 || res.Errors["tls"] != res.Requests || !strings.Contains(res.ErrorSamples["tls"], tc.sample) {
				t.Fatalf("ok %d of %d, errors %v, samples %v; want every request a tls error with %q", res.OK, res.Requests, res.Errors, res.ErrorSamples, tc.sample)
			}
		})
	}
}
