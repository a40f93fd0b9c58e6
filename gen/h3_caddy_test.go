package gen

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/findbin"
)

// TestH3Caddy runs against Caddy serving a file over HTTPS and HTTP/3. Caddy
// answers a request whose Host matches no site with an empty 200, so the
// test sends the site's Host and checks every body's digest; a second run
// with the wrong Host must then fail verification.
func TestH3Caddy(t *testing.T) { h3Modes(t, testH3Caddy) }

func testH3Caddy(t *testing.T, newConn bool) {
	bin, err := findbin.FindBinary("caddy")
	if err != nil {
		t.Skipf("no Caddy: %v", err)
	}
	p := testutil.Cert(t, certs.P256)
	dir := t.TempDir()
	www := filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	body := testutil.Body(4096)
	if err := os.WriteFile(filepath.Join(www, "4k"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	port := testutil.StartCaddy(t, bin, p.CA, dir, func(port int) string {
		return fmt.Sprintf("https://localhost:%d {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n", port, p.FullChain, p.Key, www)
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sum := sha256.Sum256(body)
	cfg := Config{
		URL:          "https://" + addr + "/4k",
		HTTP3:        true,
		Headers:      []string{fmt.Sprintf("Host: localhost:%d", port)},
		Connections:  4,
		NewConn:      newConn,
		Duration:     time.Second,
		Timeout:      2 * time.Second,
		TLS:          TLSOptions{CAFile: p.CA, SNI: "localhost"},
		VerifySHA256: sum[:],
	}
	res := runH3Test(t, cfg)
	if res.OK == 0 || errorTotal(res) != 0 || res.Status["200"] != res.OK {
		t.Fatalf("ok %d status %v errors %v %v", res.OK, res.Status, res.Errors, res.ErrorSamples)
	}
	if res.BytesRead != res.OK*4096 || res.QUICVersion != "v1" || res.TLS == nil || res.TLS.ALPN != "h3" {
		t.Errorf("bytes %d for %d responses, quic %q, tls %+v", res.BytesRead, res.OK, res.QUICVersion, res.TLS)
	}
	cfg.Headers = nil // Host 127.0.0.1:PORT matches no site: empty 200s
	res = runH3Test(t, cfg)
	if res.OK != 0 || res.Errors["body_mismatch"] == 0 {
		t.Errorf("wrong Host: ok %d errors %v: want every body to fail verification", res.OK, res.Errors)
	}
}
