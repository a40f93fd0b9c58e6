package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
)

// TestGenH2AgainstServe drives `loadlab gen --h2` against `loadlab serve
// --h2` (the backend): h2c with prior knowledge and ALPN h2 over TLS, each
// through the CLI; every request the result counts is one the backend
// served, and /close (a GOAWAY after each response) costs none.
func TestGenH2AgainstServe(t *testing.T) {
	p := testutil.Cert(t, certs.P256)
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"h2c", false}, {"tls", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := backend.Config{Listen: "127.0.0.1:0", H2: true}
			scheme := "http"
			if tc.tls {
				cfg.TLSCert, cfg.TLSKey, scheme = p.FullChain, p.Key, "https"
			}
			srv, err := backend.Start(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			base := scheme + "://" + srv.Addr()
			before := srv.Stats().Requests
			res := genJSON(t, "--h2", "-c", "3", "--streams", "8", "-d", "1s", "--ca", p.CA, base+"/1k")
			served := srv.Stats().Requests - before
			if res.Protocol != "h2" || res.Streams != 8 || res.Connections != 3 || res.H2 == nil {
				t.Fatalf("protocol %q streams %d connections %d h2 %v", res.Protocol, res.Streams, res.Connections, res.H2)
			}
			if res.OK == 0 || res.ErrorCount() != 0 || res.Requests != res.OK || served != res.OK || res.BytesRead != res.OK*1024 {
				t.Fatalf("ok %d of %d, %d bytes, errors %v %v; the backend served %d", res.OK, res.Requests, res.BytesRead, res.Errors, res.ErrorSamples, served)
			}
			if tc.tls && (res.TLS == nil || res.TLS.ALPN != "h2" || res.Handshakes != 3) {
				t.Fatalf("tls %+v, %d handshakes", res.TLS, res.Handshakes)
			}

			// /close: x/net sends GOAWAY after each response and closes
			// once the connection is idle; the run reconnects each time.
			before = srv.Stats().Requests
			res = genJSON(t, "--h2", "-c", "2", "-r", "200", "-d", "1s", "--ca", p.CA, base+"/close")
			served = srv.Stats().Requests - before
			if res.OK != 200 || res.Requests != 200 || res.ErrorCount() != 0 || served != 200 {
				t.Fatalf("/close: ok %d of %d, errors %v %v; the backend served %d", res.OK, res.Requests, res.Errors, res.ErrorSamples, served)
			}
			if res.H2.GoAways < 100 || res.H2.GoAwayCodes["NO_ERROR"] != res.H2.GoAways {
				t.Errorf("/close: %d goaways %v for 200 responses", res.H2.GoAways, res.H2.GoAwayCodes)
			}
		})
	}
}

// TestGenH2ServerMaxStreams: serve --h2-max-streams 2 below --streams 10.
func TestGenH2ServerMaxStreams(t *testing.T) {
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0", H2: true, H2MaxStreams: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	res := genJSON(t, "--h2", "-c", "2", "-d", "500ms", "http://"+srv.Addr()+"/1k")
	if res.OK == 0 || res.ErrorCount() != 0 || res.Streams != gen.DefaultStreams || res.H2.ServerMaxStreams != 2 || res.H2.Refused != 0 {
		t.Fatalf("ok %d errors %v streams %d h2 %+v", res.OK, res.Errors, res.Streams, res.H2)
	}
}

// genJSON runs loadlab gen with args and returns its JSON result.
func genJSON(t *testing.T, args ...string) *result.Result {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	start := time.Now()
	code, _ := pincertsRun(t, "gen", append([]string{"-q", "--json", out}, args...)...)
	if code != 0 {
		t.Fatalf("gen %v: exit %d", args, code)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("gen %v took %v", args, el)
	}
	res := loadResult(t, out)
	return res
}
