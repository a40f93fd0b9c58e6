package gen

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"

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

// startH3Server serves h over HTTP/3 until the test ends.
func startH3Server(t testing.TB, h http.Handler) *h3TestServer {
	t.Helper()
	return startH3ServerWith(t, h, nil)
}

// startH3ServerWith is startH3Server with a hook to adjust the server.
func startH3ServerWith(t testing.TB, h http.Handler, adjust func(*http3.Server)) *h3TestServer {
	t.Helper()
	p := testutil.Cert(t, certs.P256)
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

// fixedBody answers every request with n bytes.
func fixedBody(n int) http.Handler {
	body := testutil.Body(n)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.Write(body)
	})
}
