// Package tlsfd is TLS on the TCP loops' own non-blocking sockets: the
// handshake (package tls13's lean TLS 1.3 handshake, or crypto/tls and uTLS
// run as a coroutine over the raw descriptor) and, after it, a record layer
// that does not allocate per request. A Conn is the sock.Stream of one
// connection; a Loop is one event loop's scratch space; a Client is the
// configuration every connection of a run shares. The configuration itself
// (which library, which options) is the generator's; this package takes it
// built.
//
// Imports: only gen/internal/rawio, gen/internal/sock and gen/tls13 among
// loadlab's packages.
package tlsfd

import (
	"crypto/tls"
	"crypto/x509"

	utls "github.com/refraction-networking/utls"

	"github.com/loadlab/loadlab/gen/tls13"
)

// Client is the TLS state every connection of a run shares. Exactly one of
// Lean, Std and UTLS (with Hello) runs the handshakes, in that order of
// preference.
type Client struct {
	Lean  *tls13.Config // package tls13's lean TLS 1.3 handshakes
	Std   *tls.Config   // crypto/tls handshakes
	UTLS  *utls.Config  // uTLS handshakes with the ClientHello preset Hello
	Hello utls.ClientHelloID

	ALPN   string // the one protocol offered ("" is http/1.1); an h2 connection that does not get it fails
	Resume bool   // session tickets matter (crypto/tls reads until the first application data)

	// Capturer, if set, captures what the first completed handshake
	// negotiated.
	Capturer Capturer
}

// Capturer is told what a handshake negotiated until it has what it needs.
type Capturer interface {
	// Captured reports that the capturer needs no more sessions: the lean
	// handshakes then stop keeping the server's certificate, and nothing
	// allocates for it.
	Captured() bool
	Capture(Session)
}

// Session is what a finished handshake negotiated.
type Session struct {
	Version, Suite uint16
	Curve          tls.CurveID // 0 if the library does not say (uTLS)
	ALPN           string
	Resumed        bool
	Peer           []*x509.Certificate // the server's chain, or its leaf alone (lean)
}

// freshSpec returns a new copy of the preset for one connection (uTLS
// shares a spec's slices between the connections it is applied to), with
// ALPN narrowed to the run's protocol: the presets offer h2 and http/1.1,
// and a run speaks one of them.
func (c *Client) freshSpec() *utls.ClientHelloSpec {
	spec, _ := utls.UTLSIdToSpec(c.Hello) // checked when the Client was built
	alpn := c.ALPN
	if alpn == "" {
		alpn = "http/1.1"
	}
	for _, ext := range spec.Extensions {
		if a, ok := ext.(*utls.ALPNExtension); ok {
			a.AlpnProtocols = []string{alpn}
		}
	}
	return &spec
}

// LeanSession is what a completed lean handshake negotiated; Peer holds
// the server's leaf when the handshake kept it (tls13.Client.KeepLeaf).
func LeanSession(hs *tls13.Handshake) Session {
	var peer []*x509.Certificate
	if leaf := hs.Leaf(); leaf != nil {
		if cert, err := x509.ParseCertificate(leaf); err == nil {
			peer = []*x509.Certificate{cert}
		}
	}
	curve := tls.X25519
	if hs.Group() == tls13.P256 {
		curve = tls.CurveP256
	}
	return Session{Version: tls.VersionTLS13, Suite: hs.Suite().ID, Curve: curve, ALPN: hs.ALPN(), Peer: peer}
}

// Error is a failure of TLS itself on a connection (a malformed or
// unexpected record, a protocol the server did not select), as opposed to
// the socket under it. Its text starts with "tls: ".
type Error struct {
	Msg string
	Err error // what it wraps, if anything (io.EOF: the server closed during the handshake)
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

// newError returns an Error with a fixed text.
func newError(msg string) error { return &Error{Msg: msg} }
