package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/backend"
)

func TestOriginProfilesRoles(t *testing.T) {
	set := Builtins()
	NamesOf, RoleOf := set.NamesOf, set.RoleOf
	want := "caddy-files caddy-respond h2o-files lighttpd-files nginx-files nginx-files-nosendfile"
	if got := strings.Join(NamesOf(RoleOrigin), " "); got != want {
		t.Errorf("NamesOf(origin) = %s, want %s", got, want)
	}
	for _, n := range NamesOf(RoleProxy) {
		if RoleOf(n) != RoleProxy || strings.Contains(n, "files") {
			t.Errorf("%s listed as a proxy", n)
		}
	}
	if RoleOf("nginx-files") != RoleOrigin || RoleOf("nope") != "" {
		t.Errorf("RoleOf: nginx-files %q, nope %q", RoleOf("nginx-files"), RoleOf("nope"))
	}
	p, _ := Get("caddy-respond")
	if p.ServesFiles() || !bytes.Equal(p.FixedBody, []byte("hello")) {
		t.Errorf("caddy-respond: ServesFiles %v, FixedBody %q", p.ServesFiles(), p.FixedBody)
	}
}

// sendfile on and off are in the rendered nginx configs, and every origin
// serves Root (caddy-respond answers instead).
func TestRenderOrigins(t *testing.T) {
	p := sampleParams()
	on := render(t, "nginx-files", p)["nginx.conf"]
	off := render(t, "nginx-files-nosendfile", p)["nginx.conf"]
	for name, conf := range map[string]string{"nginx-files": on, "nginx-files-nosendfile": off} {
		mustContain(t, name, conf, "root /srv/loadlab-www;", "access_log off;", "keepalive_timeout 65;",
			"listen 127.0.0.1:8080;", "listen 127.0.0.1:8443 ssl http2;", "ssl_certificate     /certs/fullchain.pem;", "ssl_protocols TLSv1.2 TLSv1.3;")
		mustNotContain(t, name, conf, "proxy_pass")
	}
	mustContain(t, "nginx-files", on, "sendfile on;")
	mustNotContain(t, "nginx-files", on, "sendfile off;")
	mustContain(t, "nginx-files-nosendfile", off, "sendfile off;")
	mustNotContain(t, "nginx-files-nosendfile", off, "sendfile on;")

	files := render(t, "caddy-files", p)["Caddyfile"]
	mustContain(t, "caddy-files", files, "root * /srv/loadlab-www", "file_server", "https://bench.lab:8443 {", "http://bench.lab:8080 {", "tls /certs/fullchain.pem /certs/key.pem")
	mustNotContain(t, "caddy-files", files, "respond", "reverse_proxy")
	respond := render(t, "caddy-respond", p)["Caddyfile"]
	mustContain(t, "caddy-respond", respond, `respond "hello" 200`, "https://bench.lab:8443 {", "http://bench.lab:8080 {")
	mustNotContain(t, "caddy-respond", respond, "file_server", "reverse_proxy")

	h2o := render(t, "h2o-files", p)["h2o.conf"]
	mustContain(t, "h2o-files", h2o, "file.dir: /srv/loadlab-www", "port: 8080", "port: 8443")
	mustNotContain(t, "h2o-files", h2o, "proxy.reverse.url")
}

// An origin that serves files needs an absolute, plain document root.
func TestOriginRenderNeedsRoot(t *testing.T) {
	for _, name := range []string{"nginx-files", "nginx-files-nosendfile", "caddy-files", "h2o-files"} {
		prof, _ := Get(name)
		for _, root := range []string{"", "www", "/srv/a b", "/srv/a;b"} {
			p := sampleParams()
			p.Root = root
			if _, err := prof.Render(p); err == nil || !strings.Contains(err.Error(), "Root") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s with Root %q: err = %v, want a one-line error naming Root", name, root, err)
			}
		}
	}
	p := sampleParams()
	p.Root = ""
	if _, err := Get("caddy-respond"); err != nil {
		t.Fatal(err)
	}
	prof, _ := Get("caddy-respond")
	if _, err := prof.Render(p); err != nil {
		t.Errorf("caddy-respond serves no file, needs no Root: %v", err)
	}
}

func TestWriteFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "www")
	if err := WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	for _, path := range FilePaths {
		b, err := os.ReadFile(filepath.Join(dir, path[1:]))
		if err != nil || !bytes.Equal(b, backend.Body(path)) {
			t.Errorf("%s: %d bytes, %v; want the backend's %d bytes", path, len(b), err, len(backend.Body(path)))
		}
	}
}

// originClient dials the origin's plain or TLS listener for any URL.
func originClient(p Params, scheme string) *http.Client {
	addr := hostPort(p.ListenHost, p.HTTPSPort)
	if scheme == "http" {
		addr = hostPort(p.ListenHost, p.HTTPPort)
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     &tls.Config{ServerName: p.ServerName, InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}},
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// get fetches scheme://ServerName+path from the origin.
func get(t *testing.T, c *http.Client, scheme, host, path string) (int, []byte) {
	t.Helper()
	resp, err := c.Get(scheme + "://" + host + path)
	if err != nil {
		t.Fatalf("GET %s %s: %v", scheme, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s %s: reading the body: %v", scheme, path, err)
	}
	return resp.StatusCode, body
}

// Every file-serving origin serves the lab's files byte-identical to the
// backend's bodies over plain HTTP and HTTPS; caddy-respond answers its
// fixed body on both.
func TestOriginsServeFilesOverBothSchemes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	cert := writeTestCert(t, t.TempDir(), "p256")
	for _, prof := range profilesOf(RoleOrigin) {
		t.Run(prof.Name, func(t *testing.T) {
			path := installed(t, prof)
			p := startReady(t, prof, path, cert, 9) // nothing behind it: an origin never calls the backend
			for _, scheme := range []string{"http", "https"} {
				c := originClient(p, scheme)
				for _, fp := range FilePaths {
					status, body := get(t, c, scheme, p.ServerName, fp)
					want := backend.Body(fp)
					if !prof.ServesFiles() {
						want = prof.FixedBody
					}
					if status != 200 || !bytes.Equal(body, want) {
						got, exp := sha256.Sum256(body), sha256.Sum256(want)
						t.Errorf("%s %s: status %d, %d bytes sha256 %s; want 200, %d bytes sha256 %s", scheme, fp, status, len(body), shortHash(got), len(want), shortHash(exp))
					}
				}
				if prof.ServesFiles() {
					if status, _ := get(t, c, scheme, p.ServerName, "/missing"); status != 404 {
						t.Errorf("%s /missing: status %d, want 404 (files only from the root)", scheme, status)
					}
				}
				c.CloseIdleConnections()
			}
		})
	}
}

// sendfile on and off change what nginx's workers do for a plain-HTTP
// body: with it on they call sendfile(2) and never read the file; with it
// off they read it (pread64) and write it, and never call sendfile. strace
// attaches to the running workers (not to the master, so detaching leaves
// nginx running) while 20 requests of /100k are served.
func TestNginxSendfileSyscalls(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed: scripts/install-proxies.sh installs it")
	}
	cert := writeTestCert(t, t.TempDir(), "p256")
	counts := map[string]map[string]int{}
	for _, name := range []string{"nginx-files", "nginx-files-nosendfile"} {
		prof, _ := Get(name)
		path := installed(t, prof)
		p := startReady(t, prof, path, cert, 9)
		workers := nginxWorkers(t, p)
		out := filepath.Join(t.TempDir(), "strace.out")
		args := []string{"-f", "-qq", "-e", "trace=sendfile,pread64,read,readv,write,writev", "-o", out}
		for _, w := range workers {
			args = append(args, "-p", strconv.Itoa(w))
		}
		cmd := exec.Command(straceBin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		stopStrace := func() {
			_ = cmd.Process.Signal(syscall.SIGINT) // detaches; the workers keep running
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}
		waitAttached(t, workers)
		c := originClient(p, "http")
		for i := 0; i < 20; i++ {
			if status, body := get(t, c, "http", p.ServerName, "/100k"); status != 200 || !bytes.Equal(body, backend.Body("/100k")) {
				stopStrace()
				t.Fatalf("%s: GET /100k: status %d, %d bytes", name, status, len(body))
			}
		}
		c.CloseIdleConnections()
		stopStrace()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("%s: strace wrote nothing (%v): %s", name, err, stderr.String())
		}
		counts[name] = syscallCounts(string(b))
		t.Logf("%s: system calls of the workers for 20 x /100k over HTTP: %v", name, counts[name])
	}
	on, off := counts["nginx-files"], counts["nginx-files-nosendfile"]
	if on["sendfile"] < 20 {
		t.Errorf("sendfile on: %d sendfile calls for 20 bodies, want at least one per body", on["sendfile"])
	}
	if on["pread64"] > 0 {
		t.Errorf("sendfile on: %d pread64 calls, want none (the body never enters userspace)", on["pread64"])
	}
	if off["sendfile"] != 0 {
		t.Errorf("sendfile off: %d sendfile calls, want none", off["sendfile"])
	}
	if off["pread64"]+off["read"] < 20 {
		t.Errorf("sendfile off: %d pread64 and %d read calls for 20 bodies, want the file read each time", off["pread64"], off["read"])
	}
}

// nginxWorkers returns the PIDs of the nginx master's children.
func nginxWorkers(t *testing.T, p Params) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(p.Dir, "nginx.pid"))
		if err == nil {
			master, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			kids, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", master, master))
			var pids []int
			for _, f := range strings.Fields(string(kids)) {
				if n, err := strconv.Atoi(f); err == nil {
					pids = append(pids, n)
				}
			}
			if len(pids) > 0 {
				return pids
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no nginx workers found (pid file: %v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitAttached waits until every pid has a tracer (strace attached).
func waitAttached(t *testing.T, pids []int) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^TracerPid:\s+(\d+)`)
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if m := re.FindSubmatch(b); m != nil && string(m[1]) != "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("strace did not attach to worker %d", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// syscallCounts counts strace's lines by system call name.
func syscallCounts(out string) map[string]int {
	re := regexp.MustCompile(`(?m)^(?:\d+\s+)?([a-z0-9_]+)\(`)
	n := map[string]int{}
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		n[m[1]]++
	}
	return n
}
