package quic

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/testutil"
)

// TestNgtcp2 checks the client against a QUIC stack that is not Go's:
// ngtcp2's example HTTP/3 server over GnuTLS with nghttp3 (Debian's
// ngtcp2-server, /usr/sbin/gtlsserver), serving files from a directory.
// Every connection must be a 200 with the file's bytes.
func TestNgtcp2(t *testing.T) {
	bin, err := findbin.FindBinary("gtlsserver")
	if err != nil {
		t.Skipf("no ngtcp2 server (apt-get install ngtcp2-server): %v", err)
	}
	www, small, big := interopFiles(t)
	for _, key := range []certs.KeyType{certs.P256, certs.RSA2048} {
		p := testutil.Cert(t, key)
		port := testutil.FreeTCPUDPPort(t)
		cmd := exec.Command(bin, "-q", "-d", www, "--timeout=30s", "127.0.0.1", fmt.Sprint(port), p.Key, p.FullChain)
		logf, err := os.Create(filepath.Join(t.TempDir(), "gtlsserver.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); logf.Close(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited }) // only the process this test started
		addr := fmt.Sprintf("127.0.0.1:%d", port)

		// Ready when a first request through it succeeds (up to 10 s).
		cl := newTestClient(t, p.CA, false, func(c *Config) { c.Path = "/small"; c.HandshakeTimeout = time.Second })
		var c Conn
		for deadline := time.Now().Add(10 * time.Second); ; {
			err := newDriver(t, addr).run(cl, &c, 2*time.Second)
			if err == nil && c.Status() == 200 {
				break
			}
			select {
			case <-exited:
				log, _ := os.ReadFile(logf.Name())
				t.Fatalf("gtlsserver exited: %s", log)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("gtlsserver on %s did not answer within 10 s: %v (status %d)", addr, err, c.Status())
			}
			time.Sleep(50 * time.Millisecond)
		}
		getFiles(t, addr, p.CA, "", small, big)
		getFilesKeepAlive(t, addr, p.CA, "", small, big)
	}
}
