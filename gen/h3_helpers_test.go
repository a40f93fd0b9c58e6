package gen

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/quic-go/quic-go/http3"
)

// h3TestServer is a quic-go HTTP/3 server on 127.0.0.1 (UDP) with a
// certificate from a fresh local CA.
type h3TestServer struct {
	url    string // https://127.0.0.1:PORT/
	caFile string // PEM of the CA that signed the server's certificate
	port   int
	close  func() // stops the server now (also done when the test ends)
}

// testCA creates a CA and a P-256 leaf for localhost/127.0.0.1 in a
// temporary directory.
func testCA(t testing.TB) certs.Paths {
	t.Helper()
	paths, err := certs.Ensure(certs.Options{Dir: t.TempDir(), Keys: []certs.KeyType{certs.P256}})
	if err != nil {
		t.Fatal(err)
	}
	return paths[certs.P256]
}

// startH3Server serves h over HTTP/3 until the test ends.
func startH3Server(t testing.TB, h http.Handler) *h3TestServer {
	t.Helper()
	return startH3ServerWith(t, h, nil)
}

// startH3ServerWith is startH3Server with a hook to adjust the server.
func startH3ServerWith(t testing.TB, h http.Handler, adjust func(*http3.Server)) *h3TestServer {
	t.Helper()
	p := testCA(t)
	cert, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{
		Handler:   h,
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	if adjust != nil {
		adjust(srv)
	}
	go srv.Serve(udp)
	stop := func() {
		srv.Close()
		udp.Close()
	}
	t.Cleanup(stop)
	port := udp.LocalAddr().(*net.UDPAddr).Port
	return &h3TestServer{url: fmt.Sprintf("https://127.0.0.1:%d/", port), caFile: p.CA, port: port, close: stop}
}

// fixedBodyBytes is the body fixedBody(n) sends.
func fixedBodyBytes(n int) []byte {
	body := make([]byte, n)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	return body
}

// fixedBody answers every request with n bytes.
func fixedBody(n int) http.Handler {
	body := fixedBodyBytes(n)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.Write(body)
	})
}

// freeUDPPort returns a UDP port on 127.0.0.1 where nothing answers: a
// socket the test holds until it ends is bound there and never reads, so
// no other program can take the port meanwhile.
func freeUDPPort(t testing.TB) string {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return fmt.Sprint(c.LocalAddr().(*net.UDPAddr).Port)
}
