package main

import (
	"os"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
)

// TestGenTLSPerKeyType drives `loadlab serve` with TLS for each key type:
// keep-alive (a handful of handshakes, one per connection), --new-conn (a full
// handshake per request, none resumed) and --new-conn --resume (resumed).
func TestGenTLSPerKeyType(t *testing.T) {
	dir := os.TempDir() + "/loadlab-test-certs"
	keys := []certs.KeyType{certs.P256, certs.RSA2048, certs.RSA4096}
	if _, err := certs.Ensure(certs.Options{Dir: dir, Keys: keys}); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		t.Run(string(k), func(t *testing.T) {
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

			nc := base
			nc.NewConn = true
			res = runGenCfg(t, nc)
			if res.OK == 0 || res.ErrorCount() != 0 {
				t.Fatalf("new-conn: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
			}
			if res.Handshakes != res.Requests || res.TLS.Resumed != 0 || res.HandshakeUs == nil || res.HandshakeUs.P50 == 0 {
				t.Fatalf("new-conn: %d handshakes for %d requests, resumed %d, handshake_us %+v", res.Handshakes, res.Requests, res.TLS.Resumed, res.HandshakeUs)
			}

			nc.TLS.Resume = true
			res = runGenCfg(t, nc)
			if res.OK == 0 || res.TLS.Resumed == 0 || res.TLS.Resumed > res.Handshakes {
				t.Fatalf("--resume: %d of %d handshakes resumed (errors %v)", res.TLS.Resumed, res.Handshakes, res.Errors)
			}
		})
	}
}
