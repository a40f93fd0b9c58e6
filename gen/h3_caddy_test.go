package gen

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/findbin"
)

// caddyAttempts bounds startCaddy's tries: the port it picks is free when
// picked, but another program may bind it before Caddy does.
const caddyAttempts = 5

// startCaddy starts Caddy with the site block site (formatted with the
// port, then the config's data directory) on a port free for TCP and UDP
// on 127.0.0.1, and returns the port once Caddy serves TLS with a
// certificate from ca for localhost. It picks another port when Caddy
// exits because its port was taken meanwhile; Caddy is killed when the
// test ends.
func startCaddy(t *testing.T, bin, ca, dir string, site func(port int) string) int {
	t.Helper()
	pool, err := certs.LoadCertPool(ca)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		port := testutil.FreeTCPUDPPort(t)
		conf := fmt.Sprintf("{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n\tstorage file_system %s\n\tservers {\n\t\tprotocols h1 h2 h3\n\t}\n}\n%s",
			filepath.Join(dir, "data"), site(port))
		confFile := filepath.Join(dir, "Caddyfile")
		if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		logPath := filepath.Join(dir, fmt.Sprintf("caddy-%d.log", attempt))
		logf, err := os.Create(logPath)
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
		t.Cleanup(func() {
			cmd.Process.Kill() // only the process this test started
			<-exited
		})
		// Ready when a TLS handshake verified against ca for localhost
		// succeeds: only this Caddy holds that certificate.
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for {
			d := &net.Dialer{Timeout: 200 * time.Millisecond}
			c, err := tls.DialWithDialer(d, "tcp", addr, &tls.Config{ServerName: "localhost", RootCAs: pool})
			if err == nil {
				c.Close()
				return port
			}
			select {
			case <-exited:
				log, _ := os.ReadFile(logPath)
				if attempt < caddyAttempts && strings.Contains(string(log), "address already in use") {
					t.Logf("port %d was taken before Caddy bound it; trying another", port)
					break
				}
				t.Fatalf("Caddy exited at start:\n%s", log)
			case <-time.After(50 * time.Millisecond):
				if time.Now().After(deadline) {
					log, _ := os.ReadFile(logPath)
					t.Fatalf("Caddy did not serve TLS on %s within 10s (%v):\n%s", addr, err, log)
				}
				continue
			}
			break
		}
	}
}

// TestH3Caddy runs against Caddy serving a file over HTTPS and HTTP/3. Caddy
// answers a request whose Host matches no site with an empty 200, so the
// test sends the site's Host and checks every body's digest; a second run
// with the wrong Host must then fail verification.
func TestH3Caddy(t *testing.T) {
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
	port := startCaddy(t, bin, p.CA, dir, func(port int) string {
		return fmt.Sprintf("https://localhost:%d {\n\tbind 127.0.0.1\n\ttls %s %s\n\troot * %s\n\tfile_server\n}\n", port, p.FullChain, p.Key, www)
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	sum := sha256.Sum256(body)
	cfg := Config{
		URL:          "https://" + addr + "/4k",
		HTTP3:        true,
		Headers:      []string{fmt.Sprintf("Host: localhost:%d", port)},
		Connections:  4,
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
