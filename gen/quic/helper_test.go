package quic

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"
	"github.com/quic-go/quic-go/http3"
)

// The environment of the helper server process (see startServerProcess).
const (
	envServer = "LOADLAB_QUIC_TEST_SERVER" // "cert.pem key.pem bodysize"
)

func TestMain(m *testing.M) {
	if v := os.Getenv(envServer); v != "" {
		serveHelper(v)
		return
	}
	os.Exit(m.Run())
}

// serveHelper runs a quic-go HTTP/3 server on 127.0.0.1, prints its
// address and serves until its stdin closes (the parent ends it).
func serveHelper(spec string) {
	f := strings.Fields(spec)
	n, _ := strconv.Atoi(f[2])
	cert, err := tls.LoadX509KeyPair(f[0], f[1])
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	srv := &http3.Server{Handler: bodyHandler(testutil.Body(n)), TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})}
	go srv.Serve(udp)
	fmt.Println("ADDR", udp.LocalAddr().String())
	io.Copy(io.Discard, os.Stdin)
	srv.Close()
	os.Exit(0)
}

// startServerProcess runs a quic-go server answering every request with
// body bytes in a child process (this test binary again), so that the
// test process's allocations and CPU time are the client's alone. It
// returns the server's address and CA file; the child is killed (by its
// PID) when the test ends.
func startServerProcess(t testing.TB, key certs.KeyType, body int) (addr, ca string) {
	t.Helper()
	p := testutil.Cert(t, key)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %s %d", envServer, p.FullChain, p.Key, body))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		t.Fatalf("helper server: %q %v", line, err)
	}
	return strings.TrimSpace(line[5:]), p.CA
}
