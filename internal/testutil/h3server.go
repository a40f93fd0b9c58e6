package testutil

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/loadlab/loadlab/certs"
)

// H3Options adjust StartH3Server's server.
type H3Options struct {
	Key    certs.KeyType // the certificate's key (default P-256)
	Curves []tls.CurveID // the server's key-exchange groups (default crypto/tls's)
	Retry  bool          // send a Retry to every new connection (address validation)
	// ClientAuth requires a client certificate, which loadlab's clients
	// never send: the handshake fails on the server's side.
	ClientAuth bool
	Adjust     func(*http3.Server) // last changes before it serves (e.g. IdleTimeout)
}

// H3Server is a quic-go HTTP/3 server on 127.0.0.1 (UDP, a port the kernel
// picked) with a certificate from the tests' local CA.
type H3Server struct {
	Addr  string // 127.0.0.1:PORT
	Port  int
	URL   string // https://127.0.0.1:PORT/
	CA    string // PEM file of the CA that signed the server's certificate
	Close func() // stops the server now (also done when the test ends)
}

// StartH3Server serves h over HTTP/3 until the test ends.
func StartH3Server(t testing.TB, h http.Handler, o H3Options) *H3Server {
	t.Helper()
	if o.Key == "" {
		o.Key = certs.P256
	}
	p := Cert(t, o.Key)
	cert, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tlsConf := http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}, CurvePreferences: o.Curves})
	if o.ClientAuth {
		tlsConf.ClientAuth = tls.RequireAnyClientCert
	}
	srv := &http3.Server{Handler: h, TLSConfig: tlsConf}
	if o.Adjust != nil {
		o.Adjust(srv)
	}
	tr := &quic.Transport{Conn: udp}
	if o.Retry {
		tr.VerifySourceAddress = func(net.Addr) bool { return true }
	}
	// As http3.Server.Serve configures its listener: 0-RTT allowed.
	qconf := &quic.Config{Allow0RTT: true}
	if srv.QUICConfig != nil {
		qconf = srv.QUICConfig.Clone()
	}
	qconf.EnableDatagrams = srv.EnableDatagrams
	ln, err := tr.ListenEarly(srv.TLSConfig, qconf)
	if err != nil {
		t.Fatal(err)
	}
	go srv.ServeListener(ln)
	stop := func() {
		srv.Close()
		ln.Close()
		tr.Close()
		udp.Close()
	}
	t.Cleanup(stop)
	port := udp.LocalAddr().(*net.UDPAddr).Port
	return &H3Server{Addr: udp.LocalAddr().String(), Port: port, URL: fmt.Sprintf("https://127.0.0.1:%d/", port), CA: p.CA, Close: stop}
}
