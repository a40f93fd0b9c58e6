package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
)

// TestGenTLSPerKeyType drives `loadlab serve` with TLS for each key type:
// keep-alive (a handful of handshakes, one per connection), --new-conn (a full
// handshake per request, none resumed) on the lean TLS 1.3 implementation with each
// cipher suite, with --fresh-key-share, with a wrong CA (every handshake a
// tls error; --insecure works), on crypto/tls (--tls-engine std), and
// --new-conn --resume (resumed, crypto/tls).
func TestGenTLSPerKeyType(t *testing.T) {
	dir := testutil.CertDir(t)
	keys := certs.AllKeyTypes()
	for _, k := range keys {
		t.Run(string(k), func(t *testing.T) {
			// Key types side by side: each checks what was negotiated and
			// counted, not how fast.
			t.Parallel()
			p := certs.PathsFor(dir, k)
			srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0", TLSCert: p.FullChain, TLSKey: p.Key})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			base := gen.Config{URL: "https://" + srv.Addr() + "/1k", Connections: 4, Duration: time.Second,
				TLS: gen.TLSOptions{CAFile: p.CA}}

			res := runGenCfg(t, base)
			if res.OK == 0 || res.ErrorCount() != 0 || res.TLS == nil {
				t.Fatalf("keep-alive: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
			}
			if res.TLS.ServerKey != k.ServerKeyName() || res.TLS.Version != "TLS 1.3" || res.TLS.Curve != "x25519" {
				t.Fatalf("tls %+v, want server key %s, TLS 1.3, x25519", *res.TLS, k.ServerKeyName())
			}
			if res.Handshakes > 4 {
				t.Fatalf("keep-alive made %d handshakes for 4 connections", res.Handshakes)
			}

			if res.TLS.Engine != "lean" || res.TLS.ALPN != "http/1.1" {
				t.Fatalf("keep-alive: tls %+v, want the lean TLS implementation and ALPN http/1.1", *res.TLS)
			}

			nc := base
			nc.NewConn = true
			nc.Duration = 500 * time.Millisecond
			variants := []struct {
				name          string
				mod           func(*gen.Config)
				engine, share string
				cipher        string
			}{
				{"lean aes128gcm", func(c *gen.Config) { c.TLS.Ciphers = []string{"aes128gcm"} }, "lean", "reused", "TLS_AES_128_GCM_SHA256"},
				{"lean aes256gcm", func(c *gen.Config) { c.TLS.Ciphers = []string{"aes256gcm"} }, "lean", "reused", "TLS_AES_256_GCM_SHA384"},
				{"lean chacha20", func(c *gen.Config) { c.TLS.Ciphers = []string{"chacha20"} }, "lean", "reused", "TLS_CHACHA20_POLY1305_SHA256"},
				{"lean fresh", func(c *gen.Config) { c.TLS.FreshKeyShare = true }, "lean", "fresh", ""},
				{"lean insecure", func(c *gen.Config) { c.TLS.CAFile, c.TLS.Insecure = "", true }, "lean", "reused", ""},
				{"std", func(c *gen.Config) { c.TLS.Engine = "std" }, "crypto/tls", "fresh", ""},
			}
			for _, v := range variants {
				cfg := nc
				v.mod(&cfg)
				res = runGenCfg(t, cfg)
				if res.OK == 0 || res.ErrorCount() != 0 {
					t.Fatalf("new-conn %s: ok %d errors %v %v", v.name, res.OK, res.Errors, res.ErrorSamples)
				}
				if res.Handshakes != res.Requests || res.TLS.Resumed != 0 || res.HandshakeUs == nil || res.HandshakeUs.P50 == 0 {
					t.Fatalf("new-conn %s: %d handshakes for %d requests, resumed %d, handshake_us %+v", v.name, res.Handshakes, res.Requests, res.TLS.Resumed, res.HandshakeUs)
				}
				if i := res.TLS; i.Engine != v.engine || i.ClientKeyShare != v.share || (v.cipher != "" && i.Cipher != v.cipher) || i.ServerKey != k.ServerKeyName() {
					t.Fatalf("new-conn %s: tls %+v, want engine %s, key share %s, cipher %q", v.name, *i, v.engine, v.share, v.cipher)
				}
			}
			wrong := nc
			wrong.TLS.CAFile = testutil.OtherCA(t)
			res = runGenCfg(t, wrong)
			if res.OK != 0 || res.Requests == 0 || res.Errors["tls"] != res.Requests || !strings.Contains(res.ErrorSamples["tls"], "certificate signed by unknown authority") {
				t.Fatalf("wrong --ca: ok %d of %d, errors %v %v", res.OK, res.Requests, res.Errors, res.ErrorSamples)
			}

			nc.TLS.Resume = true
			nc.Duration = time.Second
			res = runGenCfg(t, nc)
			if res.OK == 0 || res.TLS.Resumed == 0 || res.TLS.Resumed > res.Handshakes {
				t.Fatalf("--resume: %d of %d handshakes resumed (errors %v)", res.TLS.Resumed, res.Handshakes, res.Errors)
			}
		})
	}
}

// A server whose certificate the run cannot verify: the tls sample says
// what to do (--ca FILE or --insecure), once, and the text output does not
// repeat the class name.
func TestGenUnknownCAHint(t *testing.T) {
	p := testutil.Cert(t, certs.P256)
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0", TLSCert: p.FullChain, TLSKey: p.Key})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "res.json")
	code, stderr := captureRun(t, "gen", "-c", "1", "-d", "300ms", "--ca", testutil.OtherCA(t), "--json", out, "https://"+srv.Addr()+"/1k")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	res := loadResult(t, out)
	s := res.ErrorSamples["tls"]
	if res.Errors["tls"] == 0 || !strings.Contains(s, "certificate signed by unknown authority") || strings.Count(s, caHint) != 1 {
		t.Fatalf("errors %v, tls sample %q: want the unknown authority and, once, %q", res.Errors, s, caHint)
	}
	var text strings.Builder
	res.WriteText(&text)
	if strings.Contains(text.String(), "tls: tls:") {
		t.Fatalf("text output repeats the class:\n%s", text.String())
	}
}
