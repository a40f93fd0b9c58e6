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
	www, small, big := interopFiles(t)
	for _, key := range []certs.KeyType{certs.P256, certs.RSA2048} {
		p := testutil.Cert(t, key)
		port := testutil.StartCaddy(t, bin, p.CA, t.TempDir(), func(port int) string {
			return fmt.Sprintf("https://localhost:%d {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n", port, p.FullChain, p.Key, www)
		})
		getFiles(t, fmt.Sprintf("127.0.0.1:%d", port), p.CA, fmt.Sprintf("localhost:%d", port), small, big)
		getFilesKeepAlive(t, fmt.Sprintf("127.0.0.1:%d", port), p.CA, fmt.Sprintf("localhost:%d", port), small, big)
	}
}

// interopFiles writes the two files the interop servers serve: 4 KiB and
// 1 MiB.
func interopFiles(t *testing.T) (www string, small, big []byte) {
	www = t.TempDir()
	small, big = testutil.Body(4096), testutil.Body(1<<20)
	for name, b := range map[string][]byte{"small": small, "big": big} {
		if err := os.WriteFile(filepath.Join(www, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return www, small, big
}

// getFiles fetches both files from addr, verified against ca and insecure,
// three new connections each: every one a 200 with the file's bytes.
func getFiles(t *testing.T, addr, ca, authority string, small, big []byte) {
	for _, insecure := range []bool{false, true} {
		for _, f := range []struct {
			path string
			body []byte
		}{{"/small", small}, {"/big", big}} {
			cl := newTestClient(t, ca, insecure, func(c *Config) {
				c.Path = f.path
				if authority != "" {
					c.Authority = authority
				}
			})
			getN(t, newDriver(t, addr), cl, 3, f.body)
		}
	}
}

// getFilesKeepAlive fetches both files from addr on keep-alive
// connections, verified: 50 requests of the small file on one, 5 of the
// big one on another, each a 200 with the file's bytes on the next
// stream, with one handshake.
func getFilesKeepAlive(t *testing.T, addr, ca, authority string, small, big []byte) {
	for _, f := range []struct {
		path string
		body []byte
		n    int
	}{{"/small", small, 50}, {"/big", big, 5}} {
		cl := newTestClient(t, ca, false, func(c *Config) {
			c.Path = f.path
			c.KeepAlive = true
			if authority != "" {
				c.Authority = authority
			}
		})
		d := newDriver(t, addr)
		var c Conn
		keepAlive(t, d, cl, &c, f.n, f.body)
		d.closeConn(&c)
	}
}
