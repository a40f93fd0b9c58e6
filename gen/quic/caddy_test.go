package quic

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/testutil"
)

// startCaddy is a short form of gen's startCaddy (gen/h3_caddy_test.go):
// Caddy serving dir's files over HTTPS and HTTP/3 on a free port of
// 127.0.0.1 with the test certificate p, ready once a TLS handshake over
// TCP verifies. Caddy is killed (by its PID) when the test ends.
func startCaddy(t *testing.T, bin string, p certs.Paths, www string) int {
	t.Helper()
	pool, err := certs.LoadCertPool(p.CA)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for attempt := 1; attempt <= 3; attempt++ {
		port := testutil.FreeTCPUDPPort(t)
		conf := fmt.Sprintf("{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n\tstorage file_system %s\n\tservers {\n\t\tprotocols h1 h2 h3\n\t}\n}\n"+
			"https://localhost:%d {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n",
			filepath.Join(dir, "data"), port, p.FullChain, p.Key, www)
		confFile := filepath.Join(dir, "Caddyfile")
		if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("caddy-%d.log", attempt)))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "--config", confFile, "--adapter", "caddyfile")
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); logf.Close(); close(exited) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-exited })
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			d := &net.Dialer{Timeout: 200 * time.Millisecond}
			if c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: "localhost", RootCAs: pool}); err == nil {
				c.Close()
				return port
			}
			select {
			case <-exited:
				deadline = time.Time{} // try another port
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	t.Fatal("Caddy did not start")
	return 0
}

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
		port := startCaddy(t, bin, p, www)
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
