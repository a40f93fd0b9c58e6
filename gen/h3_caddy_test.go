package gen

import (
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// caddyBinary returns the path of a Caddy build on this machine, or "".
func caddyBinary() string {
	for _, p := range []string{"/root/proxybin/caddy", "/work/main/.cache/bin/caddy"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// freeTCPUDPPort returns a port free for both TCP and UDP on 127.0.0.1.
func freeTCPUDPPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		u, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		ln.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no port free for both TCP and UDP")
	return 0
}

// TestH3Caddy runs against Caddy serving a file over HTTPS and HTTP/3. Caddy
// answers a request whose Host matches no site with an empty 200, so the
// test sends the site's Host and checks every body's digest; a second run
// with the wrong Host must then fail verification.
func TestH3Caddy(t *testing.T) {
	bin := caddyBinary()
	if bin == "" {
		t.Skip("no Caddy binary at /root/proxybin/caddy or /work/main/.cache/bin/caddy")
	}
	p := testCA(t)
	dir := t.TempDir()
	www := filepath.Join(dir, "www")
	if err := os.Mkdir(www, 0o755); err != nil {
		t.Fatal(err)
	}
	body := fixedBodyBytes(4096)
	if err := os.WriteFile(filepath.Join(www, "4k"), body, 0o644); err != nil {
		t.Fatal(err)
	}
	port := freeTCPUDPPort(t)
	conf := fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
	storage file_system %s
	servers {
		protocols h1 h2 h3
	}
}
https://localhost:%d {
	bind 127.0.0.1
	tls %s %s
	root * %s
	file_server
}
`, filepath.Join(dir, "data"), port, p.FullChain, p.Key, www)
	confFile := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "--config", confFile, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill() // only the process this test started
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "caddy.log"))
			t.Fatalf("Caddy did not listen on %s within 10s:\n%s", addr, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
