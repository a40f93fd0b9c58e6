package proxy

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"
)

const testServerName = "bench.lab"

// testCert is a certificate for testServerName (and 127.0.0.1) as the
// three files Params names.
type testCert struct{ Cert, Key, Combined string }

// writeTestCert returns the shared test certificate with the given key type
// ("p256" or "rsa2048"; testutil.CertDir, which covers testServerName). dir
// is unused: the files are shared by the tests, read-only.
func writeTestCert(t *testing.T, dir, kind string) testCert {
	t.Helper()
	k := certs.KeyType(kind)
	if !k.Valid() {
		t.Fatalf("unknown key kind %q", kind)
	}
	p := testutil.Cert(t, k)
	return testCert{Cert: p.FullChain, Key: p.Key, Combined: p.Combined}
}

// standInBackend is a TEST-LOCAL STAND-IN for lab/backend (not on this
// branch yet): a net/http server on loopback whose /1k returns exactly 1024
// fixed bytes. It counts accepted connections and remembers what the proxy
// sent in its last request.
type standInBackend struct {
	Port     int
	Body     []byte
	accepted atomic.Int64

	mu        sync.Mutex
	lastProto string
	lastConn  string
	lastHost  string
}

func startStandInBackend(t *testing.T) *standInBackend {
	t.Helper()
	b := &standInBackend{Body: make([]byte, ReadySize)}
	for i := range b.Body {
		b.Body[i] = "0123456789abcdef"[i%16]
	}
	copy(b.Body, "loadlab-standin-")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.Port = ln.Addr().(*net.TCPAddr).Port
	mux := http.NewServeMux()
	mux.HandleFunc("/1k", func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.lastProto, b.lastConn, b.lastHost = r.Proto, r.Header.Get("Connection"), r.Host
		b.mu.Unlock()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(b.Body)))
		w.Write(b.Body)
	})
	srv := &http.Server{
		Handler: mux,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				b.accepted.Add(1)
			}
		},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return b
}

// last returns the protocol, Connection header and Host of the last request.
func (b *standInBackend) last() (proto, conn, host string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastProto, b.lastConn, b.lastHost
}

// testParams builds Params for a fresh run directory in front of backend.
func testParams(t *testing.T, cert testCert, backendPort int) Params {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "www")
	if err := WriteFiles(root); err != nil {
		t.Fatal(err)
	}
	return Params{
		Dir: dir, ListenHost: "127.0.0.1",
		HTTPPort: testutil.FreePort(t), HTTPSPort: testutil.FreePort(t),
		BackendHost: "127.0.0.1", BackendPort: backendPort,
		CertFile: cert.Cert, KeyFile: cert.Key, CombinedPEM: cert.Combined, KeyType: "p256",
		ServerName: testServerName, Workers: 2, MaxConn: 1024, Root: root, User: testUser(),
	}
}

// testUser is Params.User as the lab's session sets it for servers the
// tests start themselves: as root, serve as root (nothing to switch to);
// otherwise "".
func testUser() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return ""
}

// writeExe writes an executable script at path.
var writeExe = testutil.WriteExe

// profilesOf returns the profiles of role.
func profilesOf(role string) []Profile {
	var out []Profile
	for _, p := range All() {
		if p.Role == role {
			out = append(out, p)
		}
	}
	return out
}

// installed returns the binary of prof or skips the test.
func installed(t *testing.T, prof Profile) string {
	t.Helper()
	path, err := prof.Find()
	if err != nil {
		t.Skipf("%s not installed (%v): run scripts/install-proxies.sh to test profile %s", prof.Proxy, err, prof.Name)
	}
	return path
}

// startAttempts bounds startReady's tries: the ports testParams picks
// were free a moment ago, but another program may bind one first.
const startAttempts = 5

// startReady renders prof in front of the backend on backendPort with
// fresh ports, starts it and waits until Ready; when the proxy exits
// because a port was taken meanwhile, it tries other ports. Cleanup stops
// it.
func startReady(t *testing.T, prof Profile, path string, cert testCert, backendPort int) Params {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p := testParams(t, cert, backendPort)
		stop, exited := startProxy(t, prof, path, p)
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		p.Binary = path
		err := prof.Ready(ctx, p)
		cancel()
		if err == nil {
			return p
		}
		if attempt < startAttempts && logsContain(p.Dir, "address already in use") {
			t.Logf("%s: a port was taken before it bound it; trying other ports", prof.Name)
			stop()
			continue
		}
		if exited() {
			t.Fatalf("%s exited at start: %v", prof.Name, err)
		}
		t.Fatalf("Ready: %v", err)
	}
}

// logsContain reports whether a proxy log in dir contains s.
func logsContain(dir, s string) bool {
	for _, name := range []string{"output.log", "error.log"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// startProxy writes prof's config and starts it as a child in its own
// process group; stop (also run at cleanup, once) stops it with
// StopSignal and waits; exited reports whether it has exited.
func startProxy(t *testing.T, prof Profile, path string, p Params) (stop func(), exited func() bool) {
	t.Helper()
	p.Binary = path
	if _, err := WriteConfig(prof, p); err != nil {
		t.Fatal(err)
	}
	args, err := prof.Command(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = p.Dir
	out, err := os.Create(filepath.Join(p.Dir, "output.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", prof.Name, err)
	}
	done := make(chan error, 1)
	gone := make(chan struct{})
	go func() { done <- cmd.Wait(); out.Close(); close(gone) }()
	var once sync.Once
	stop = func() { once.Do(func() { stopProxy(t, prof, cmd, done, p) }) }
	t.Cleanup(stop)
	exited = func() bool {
		select {
		case <-gone:
			return true
		default:
			return false
		}
	}
	return stop, exited
}

// stopProxy signals the proxy's main process, waits for it, then makes sure
// no process of its group (workers) is left.
func stopProxy(t *testing.T, prof Profile, cmd *exec.Cmd, done chan error, p Params) {
	pid := cmd.Process.Pid
	if err := cmd.Process.Signal(StopSignal); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signalling %s (pid %d): %v", prof.Name, pid, err)
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Errorf("%s (pid %d) did not exit 15 s after %v: killing its process group", prof.Name, pid, StopSignal)
		syscall.Kill(-pid, syscall.SIGKILL)
		<-done
	}
	// The group is ours (Setpgid): wait briefly for workers, then kill leftovers.
	for i := 0; i < 50 && syscall.Kill(-pid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	if syscall.Kill(-pid, 0) == nil {
		t.Errorf("%s left processes in group %d after stopping: killing them", prof.Name, pid)
		syscall.Kill(-pid, syscall.SIGKILL)
	}
	if t.Failed() {
		dumpLogs(t, p.Dir)
	}
}

// dumpLogs prints the proxy's logs from its run directory.
func dumpLogs(t *testing.T, dir string) {
	for _, name := range []string{"output.log", "error.log"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
			s := string(b)
			if len(s) > 4000 {
				s = s[len(s)-4000:]
			}
			t.Logf("%s:\n%s", name, s)
		}
	}
}

// tcpTimeWait counts TIME_WAIT sockets in /proc/net/tcp{,6} whose local
// (src) or remote (dst) port is port.
func tcpTimeWait(t *testing.T, port int) (local, remote int) {
	t.Helper()
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		l, r := procNetCount(t, f, port, "06")
		local += l
		remote += r
	}
	return local, remote
}

// udpBound reports whether a UDP socket is bound to port.
func udpBound(t *testing.T, port int) bool {
	t.Helper()
	n := 0
	for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		l, _ := procNetCount(t, f, port, "")
		n += l
	}
	return n > 0
}

// procNetCount counts rows of a /proc/net table with local or remote port
// equal to port, and state st (any state when st is "").
func procNetCount(t *testing.T, file string, port int, st string) (local, remote int) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, 0
		}
		t.Fatal(err)
	}
	defer f.Close()
	want := strings.ToUpper(fmt.Sprintf("%04x", port))
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || (st != "" && fs[3] != st) {
			continue
		}
		if portOf(fs[1]) == want {
			local++
		}
		if portOf(fs[2]) == want {
			remote++
		}
	}
	return local, remote
}

func portOf(addr string) string {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return ""
	}
	return addr[i+1:]
}

func shortHash(sum [32]byte) string { return hex.EncodeToString(sum[:8]) }
