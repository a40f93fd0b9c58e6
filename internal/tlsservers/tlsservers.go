// Package tlsservers starts real TLS servers (nginx, HAProxy, h2o, Caddy)
// on 127.0.0.1 for tests: each serves a fixed 1 KiB body at /1k over
// HTTPS with a given certificate, in the foreground, as a child in its own
// process group that the test's cleanup stops. A server whose binary is not
// installed skips the test (scripts/install-proxies.sh installs them).
//
// Imports: only certs, internal/findbin and internal/testutil among
// loadlab's packages, never gen, lab or cmd; only tests import it.
package tlsservers

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
)

// Kind names a server.
type Kind string

// The servers this package starts.
const (
	Nginx   Kind = "nginx"
	HAProxy Kind = "haproxy"
	H2O     Kind = "h2o"
	Caddy   Kind = "caddy"
)

// All lists every kind.
var All = []Kind{Nginx, HAProxy, H2O, Caddy}

// Options configure a server.
type Options struct {
	Cert certs.Paths // the certificate it serves (FullChain, Key, Combined)
	// P256Only limits the server's key exchange to P-256, so that a client
	// sending an X25519 key share gets a HelloRetryRequest. Not every
	// server can (see CanP256Only).
	P256Only bool
	// HTTP2 makes the TLS listener offer h2 (ALPN h2 and http/1.1) and
	// opens a second, plain-text listener (Server.H2CAddr) that speaks h2c
	// with prior knowledge.
	HTTP2 bool
	// H2MaxStreams, with HTTP2, is the SETTINGS_MAX_CONCURRENT_STREAMS the
	// server advertises (0: its default). See CanH2MaxStreams.
	H2MaxStreams int
	// MaxRequests is how many requests a connection carries before the
	// server closes it (0: its default); over HTTP/2 it ends with GOAWAY.
	// See CanMaxRequests.
	MaxRequests int
}

// CanP256Only reports whether kind k supports Options.P256Only.
func CanP256Only(k Kind) bool { return k != H2O }

// CanH2MaxStreams reports whether kind k supports Options.H2MaxStreams:
// nginx and HAProxy (Caddy has no setting for it; h2o's per-connection
// limit queues requests instead of advertising it).
func CanH2MaxStreams(k Kind) bool { return k == Nginx || k == HAProxy }

// CanMaxRequests reports whether kind k supports Options.MaxRequests
// (nginx's keepalive_requests; HAProxy 2.6, Caddy and h2o have no
// per-connection request limit for HTTP/2).
func CanMaxRequests(k Kind) bool { return k == Nginx }

// Server is a running server.
type Server struct {
	Kind Kind
	Addr string // 127.0.0.1:port
	Body []byte // what /1k returns
	Dir  string // its configuration and logs
	// H2CAddr is the plain-text HTTP/2 listener (h2c with prior
	// knowledge), with Options.HTTP2.
	H2CAddr string
}

// H2CURL returns http://H2CAddr/1k.
func (s *Server) H2CURL() string { return "http://" + s.H2CAddr + "/1k" }

// URL returns https://Addr/1k.
func (s *Server) URL() string { return "https://" + s.Addr + "/1k" }

// Body1k is the body every server returns at /1k.
func Body1k() []byte {
	b := make([]byte, 1024)
	for i := range b {
		b[i] = "loadlab-tlsservers-"[i%19]
	}
	return b
}

// Binary returns the path of k's program, or "" when it is not installed
// (looked up as the lab does: internal/findbin).
func Binary(k Kind) string {
	p, err := findbin.FindBinary(string(k))
	if err != nil {
		return ""
	}
	return p
}

// Start starts a server of kind k, waits until it serves /1k, and stops it
// when the test ends. A port taken between choosing and binding it is
// retried with another.
func Start(t testing.TB, k Kind, o Options) *Server {
	t.Helper()
	bin := Binary(k)
	if bin == "" {
		t.Skipf("%s is not installed: run scripts/install-proxies.sh", k)
	}
	if o.P256Only && !CanP256Only(k) {
		t.Fatalf("%s cannot be limited to P-256", k)
	}
	if o.H2MaxStreams > 0 && !CanH2MaxStreams(k) || o.MaxRequests > 0 && !CanMaxRequests(k) {
		t.Fatalf("%s cannot limit its streams or its requests per connection", k)
	}
	var last error
	for range 3 {
		s, err := start(t, k, bin, o)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("%s did not start: %v", k, last)
	return nil
}

func start(t testing.TB, k Kind, bin string, o Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "loadlab-"+string(k)+"-")
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// Workers that drop privileges must read the files: world-readable.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	www := filepath.Join(dir, "www")
	body := Body1k()
	if err := os.Mkdir(www, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(www, "1k"), body, 0o644); err != nil {
		return nil, err
	}
	port := testutil.FreePort(t)
	s := &Server{Kind: k, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Body: body, Dir: dir}
	if o.HTTP2 {
		s.H2CAddr = net.JoinHostPort("127.0.0.1", strconv.Itoa(testutil.FreePort(t)))
	}
	conf, args := render(k, bin, s, www, o)
	confFile := filepath.Join(dir, map[Kind]string{Nginx: "nginx.conf", HAProxy: "haproxy.cfg", H2O: "h2o.conf", Caddy: "Caddyfile"}[k])
	if err := os.WriteFile(confFile, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "output.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+dir, "XDG_DATA_HOME="+dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	stop := func() {
		// Only the group this test started: the server and its workers.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		for i := 0; i < 50 && syscall.Kill(-cmd.Process.Pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err := s.waitReady(done, 20*time.Second); err != nil {
		stop()
		log, _ := os.ReadFile(filepath.Join(dir, "output.log"))
		errLog, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return nil, fmt.Errorf("%w\n%s\n%s", err, tail(log), tail(errLog))
	}
	t.Cleanup(stop)
	return s, nil
}

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// waitReady polls until GET /1k over TLS returns the body, the process
// exits, or d passes.
func (s *Server) waitReady(exited chan struct{}, d time.Duration) error {
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("the server exited")
		default:
		}
		if err = s.get(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not serving /1k after %v: %v", d, err)
}

func (s *Server) get() error {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", s.Addr,
		&tls.Config{InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	fmt.Fprintf(c, "GET /1k HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", s.Addr)
	resp, err := io.ReadAll(bufio.NewReader(c))
	if err != nil && len(resp) == 0 {
		return err
	}
	if !strings.HasPrefix(string(resp), "HTTP/1.1 200") || !strings.HasSuffix(string(resp), string(s.Body)) {
		return fmt.Errorf("GET /1k: %.80q", resp)
	}
	return nil
}

// render returns the configuration of k and its command-line arguments.
func render(k Kind, bin string, s *Server, www string, o Options) (string, []string) {
	_, port, _ := net.SplitHostPort(s.Addr)
	switch k {
	case Nginx:
		curves := "X25519:prime256v1"
		if o.P256Only {
			curves = "prime256v1"
		}
		h2, extra := "", ""
		if o.HTTP2 {
			// nginx 1.22: http2 on the listen line; a plain http2
			// listener is h2c with prior knowledge. /reset answers with
			// 444, which over HTTP/2 resets the stream.
			h2 = " http2"
			extra = fmt.Sprintf("  server {\n    listen %s http2;\n    root %s;\n    location / { }\n    location = /reset { return 444; }\n  }\n", s.H2CAddr, www)
		}
		if o.H2MaxStreams > 0 {
			extra += fmt.Sprintf("  http2_max_concurrent_streams %d;\n", o.H2MaxStreams)
		}
		if o.MaxRequests > 0 {
			extra += fmt.Sprintf("  keepalive_requests %d;\n", o.MaxRequests)
		}
		return fmt.Sprintf(`user root;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  server {
    listen %[2]s ssl%[7]s;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve %[5]s;
    root %[6]s;
    location / { }
  }
%[8]s}
`, s.Dir, s.Addr, o.Cert.FullChain, o.Cert.Key, curves, www, h2, extra), []string{"-p", s.Dir, "-c", filepath.Join(s.Dir, "nginx.conf"), "-g", "daemon off;"}
	case HAProxy:
		curves := ""
		if o.P256Only {
			curves = " curves P-256"
		}
		alpn, h2c, tune := "http/1.1", "", ""
		if o.HTTP2 {
			alpn = "h2,http/1.1"
			h2c = fmt.Sprintf("\tbind %s proto h2\n", s.H2CAddr)
		}
		if o.H2MaxStreams > 0 {
			tune = fmt.Sprintf("\ttune.h2.max-concurrent-streams %d\n", o.H2MaxStreams)
		}
		return fmt.Sprintf(`global
	maxconn 1000
	ssl-default-bind-options ssl-min-ver TLSv1.2
%sdefaults
	mode http
	timeout connect 5s
	timeout client 30s
	timeout server 30s
frontend fe
	bind %s ssl crt %s alpn %s%s
%s	http-request return status 200 content-type application/octet-stream file %s
`, tune, s.Addr, o.Cert.Combined, alpn, curves, h2c, filepath.Join(www, "1k")), []string{"-db", "-f", filepath.Join(s.Dir, "haproxy.cfg")}
	case H2O:
		// h2o offers h2 over TLS whatever the options, and speaks h2c
		// with prior knowledge on a plain listener.
		extra := ""
		if o.HTTP2 {
			_, p2, _ := net.SplitHostPort(s.H2CAddr)
			extra = fmt.Sprintf("listen:\n  host: 127.0.0.1\n  port: %s\n", p2) // h2o takes the key again
		}
		return fmt.Sprintf(`user: root
pid-file: %[1]s/h2o.pid
error-log: %[1]s/error.log
num-threads: 1
listen:
  host: 127.0.0.1
  port: %[2]s
  ssl:
    certificate-file: %[3]s
    key-file: %[4]s
    minimum-version: TLSv1.2
    ocsp-update-interval: 0
%[6]shosts:
  default:
    paths:
      "/":
        file.dir: %[5]s
`, s.Dir, port, o.Cert.FullChain, o.Cert.Key, www, extra), []string{"-c", filepath.Join(s.Dir, "h2o.conf")}
	case Caddy:
		// Caddy offers h2 over TLS by default: the options' HTTP2 only
		// adds the h2c listener (prior knowledge, through x/net's h2c).
		protocols, h2c := "h1 h2", ""
		if o.HTTP2 {
			_, p2, _ := net.SplitHostPort(s.H2CAddr)
			protocols = "h1 h2 h2c"
			h2c = fmt.Sprintf("http://:%s {\n\tbind 127.0.0.1\n\troot * %s\n\tfile_server\n}\n", p2, www)
		}
		curves := ""
		if o.P256Only {
			curves = " {\n\t\tcurves secp256r1\n\t}"
		}
		return fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
	storage file_system %[1]s/data
	servers {
		protocols %[7]s
	}
}
https://:%[2]s {
	bind 127.0.0.1
	tls %[3]s %[4]s%[5]s
	root * %[6]s
	file_server
}
%[8]s`, s.Dir, port, o.Cert.FullChain, o.Cert.Key, curves, www, protocols, h2c), []string{"run", "--config", filepath.Join(s.Dir, "Caddyfile"), "--adapter", "caddyfile"}
	}
	panic("tlsservers: unknown kind " + string(k))
}
