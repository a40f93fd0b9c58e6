package session

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Client protocols of the checks.
const (
	protoH1 = "h1" // HTTP/1.1 over TLS
	protoH2 = "h2" // HTTP/2 over TLS (ALPN)
	protoH3 = "h3" // HTTP/3 over QUIC
)

// maxCheckBody bounds what a check reads from one response.
const maxCheckBody = 4 << 20

// requestTimeout bounds one check request (a 1 MiB body included).
const requestTimeout = 20 * time.Second

// tlsConfig verifies the proxy's chain against the lab's CA for the lab's
// server name, which is also the SNI.
func (s *Session) tlsConfig() *tls.Config {
	return &tls.Config{ServerName: s.Host(), RootCAs: s.pool, MinVersion: tls.VersionTLS12}
}

// httpsClient returns a client whose every request goes to the TCP address
// addr (whatever the URL's host), over TLS with proto h1 or h2 only.
func (s *Session) httpsClient(addr, proto string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return s.dialContext(ctx, network, addr)
		},
		TLSClientConfig:     s.tlsConfig(),
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
	}
	var ps http.Protocols
	if proto == protoH2 {
		ps.SetHTTP2(true)
	} else {
		ps.SetHTTP1(true)
	}
	tr.Protocols = &ps
	return &http.Client{Transport: tr, Timeout: requestTimeout}
}

// plainClient returns a client whose every request goes to the TCP address
// addr over plain HTTP/1.1 (the backend). Its connection is kept alive and
// reset when the caller closes it (CloseIdleConnections): neither side
// keeps a TIME_WAIT socket, so the lab's own requests to the backend do
// not count in the TIME_WAIT a step starts with.
func (s *Session) plainClient(addr string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			c, err := s.dialContext(ctx, network, addr)
			if err == nil {
				resetOnClose(c)
			}
			return c, err
		},
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: requestTimeout}
}

// resetOnClose makes closing c send RST (SO_LINGER 0): no TIME_WAIT on
// either side.
func resetOnClose(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
}

// h3Client returns an HTTP/3 client whose every request goes to the UDP
// address addr, from a socket where the generator sits; closeFn frees it.
func (s *Session) h3Client(addr string) (c *http.Client, closeFn func(), err error) {
	udp, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, nil, err
	}
	pc, err := s.listenUDP()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open a UDP socket for HTTP/3: %v", err)
	}
	qt := &quic.Transport{Conn: pc}
	tr := &http3.Transport{
		TLSClientConfig:    s.tlsConfig(),
		DisableCompression: true,
		QUICConfig:         &quic.Config{HandshakeIdleTimeout: 5 * time.Second},
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
			return qt.DialEarly(ctx, udp, tlsCfg, cfg)
		},
	}
	closeFn = func() {
		_ = tr.Close()
		_ = qt.Close()
		_ = pc.Close()
	}
	return &http.Client{Transport: tr, Timeout: requestTimeout}, closeFn, nil
}

// fetch GETs scheme://host+path over c and returns the status, protocol
// and body (at most maxCheckBody bytes).
func fetch(ctx context.Context, c *http.Client, url string) (status int, proto string, body []byte, err error) {
	status, proto, _, body, err = fetchHeader(ctx, c, url)
	return status, proto, body, err
}

// fetchHeader is fetch with the response's header.
func fetchHeader(ctx context.Context, c *http.Client, url string) (status int, proto string, h http.Header, body []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", nil, nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxCheckBody))
	if err != nil {
		return resp.StatusCode, resp.Proto, resp.Header, body, fmt.Errorf("reading the body: %v", err)
	}
	return resp.StatusCode, resp.Proto, resp.Header, body, nil
}

// servedLeaf connects to the TLS address addr, verifies the chain and
// returns the DER bytes of the leaf certificate served there. The
// connection is reset afterwards, so it leaves no TIME_WAIT socket.
func (s *Session) servedLeaf(ctx context.Context, addr string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := s.dialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	resetOnClose(raw)
	defer raw.Close()
	cfg := s.tlsConfig()
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, fmt.Errorf("TLS handshake with %s: %v", addr, err)
	}
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s served no certificate", addr)
	}
	return certs[0].Raw, nil
}
