package testutil

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
)

// caddyAttempts bounds startCaddy's tries: the port it picks is free when
// picked, but another program may bind it before Caddy does.
const caddyAttempts = 5

// StartCaddy starts Caddy with the site block site (formatted with the
// port, then the config's data directory) on a port free for TCP and UDP
// on 127.0.0.1, and returns the port once Caddy serves TLS with a
// certificate from ca for localhost. It picks another port when Caddy
// exits because its port was taken meanwhile; Caddy is killed when the
// test ends.
func StartCaddy(t *testing.T, bin, ca, dir string, site func(port int) string) int {
	t.Helper()
	pool, err := certs.LoadCertPool(ca)
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		port := FreeTCPUDPPort(t)
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
