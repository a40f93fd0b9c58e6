package quic

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/testutil"
)

func TestCaddy(t *testing.T) {
	bin, err := findbin.FindBinary("caddy")
	if err != nil {
		t.Skipf("no Caddy: %v", err)
	}
	www := t.TempDir()
	small, big := testutil.Body(4096), testutil.Body(1<<20)
	os.WriteFile(filepath.Join(www, "small"), small, 0o644)
	os.WriteFile(filepath.Join(www, "big"), big, 0o644)
	for _, key := range []certs.KeyType{certs.P256, certs.RSA2048} {
		p := testutil.Cert(t, key)
		port := testutil.StartCaddy(t, bin, p.CA, t.TempDir(), func(port int) string {
			return fmt.Sprintf("https://localhost:%d {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n", port, p.FullChain, p.Key, www)
		})
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for _, insecure := range []bool{false, true} {
			for _, f := range []struct {
				path string
				body []byte
			}{{"/small", small}, {"/big", big}} {
				cl := newTestClient(t, p.CA, insecure, func(c *Config) {
					c.Path = f.path
					c.Authority = fmt.Sprintf("localhost:%d", port)
				})
				getN(t, newDriver(t, addr), cl, 3, f.body)
			}
		}
	}
}
