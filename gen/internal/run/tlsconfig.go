package run

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	utls "github.com/refraction-networking/utls"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/gen/tls13"
	"github.com/loadlab/loadlab/internal/fields"
)

// NewTLSClient builds the TLS state of s's connections.
func NewTLSClient(s *Spec) (*TLSClient, error) {
	o := s.TLS
	sni := o.SNI
	if sni == "" {
		sni = s.Target.Host
	}
	var roots *x509.CertPool
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fieldErr("TLS.CAFile", "cannot read %s: %v", o.CAFile, UnwrapPathError(err))
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fieldErr("TLS.CAFile", "%s holds no PEM certificate", o.CAFile)
		}
	}
	var curves []tls.CurveID
	for _, n := range o.Curves {
		curves = append(curves, curveIDs[n])
	}
	c := &TLSClient{Client: tlsfd.Client{Resume: o.Resume, ALPN: o.ALPN}}
	c.Capturer = c
	c.why, c.http3 = o.LeanWhy, s.HTTP3
	if o.Lean {
		var err error
		if c.Lean, err = newLeanConfig(o, sni, roots, !s.HTTP3); err != nil {
			return nil, err
		}
	}
	if o.Hello == "go" {
		c.Std = &tls.Config{
			ServerName:             sni,
			RootCAs:                roots,
			InsecureSkipVerify:     o.Insecure,
			MinVersion:             o.Version,
			MaxVersion:             o.Version,
			CurvePreferences:       curves,
			NextProtos:             []string{c.ALPN},
			SessionTicketsDisabled: !o.Resume,
		}
		if o.Resume {
			c.Std.ClientSessionCache = tls.NewLRUClientSessionCache(4096)
		}
		return c, nil
	}
	c.Hello = helloPresets[o.Hello]
	if _, err := utls.UTLSIdToSpec(c.Hello); err != nil {
		return nil, fmt.Errorf("client hello preset %s: %v", o.Hello, err)
	}
	c.UTLS = &utls.Config{
		ServerName:             sni,
		RootCAs:                roots,
		InsecureSkipVerify:     o.Insecure,
		SessionTicketsDisabled: !o.Resume,
	}
	if o.Resume {
		c.UTLS.ClientSessionCache = utls.NewLRUClientSessionCache(4096)
	}
	return c, nil
}

// newLeanConfig builds the tls13 configuration: roots nil means the
// system's (as crypto/tls does), unless --insecure. Unless prepare it is
// left for gen/quic's Config.Prepare, which sets its QUIC fields first.
func newLeanConfig(o TLS, sni string, roots *x509.CertPool, prepare bool) (*tls13.Config, error) {
	lc := &tls13.Config{ServerName: sni, ALPN: []string{o.ALPN}, FreshKeyShare: o.FreshKeyShare, Suites: o.Suites}
	for _, n := range o.Curves {
		g := tls13.X25519
		if n == "p256" {
			g = tls13.P256
		}
		lc.Groups = append(lc.Groups, g)
	}
	if !o.Insecure {
		if roots == nil {
			sys, err := x509.SystemCertPool()
			if err != nil {
				return nil, fieldErr("TLS.CAFile", "no system certificate roots (%v): give a CA file or set {TLS.Insecure}", err)
			}
			roots = sys
		}
		lc.Verifier = tls13.NewVerifier(roots, sni, 0)
	}
	if !prepare {
		return lc, nil
	}
	if err := lc.Prepare(); err != nil {
		return nil, err
	}
	return lc, nil
}

// notes returns remarks for the generator section of the result.
func (c *TLSClient) notes() []string {
	var n []string
	if c.UTLS != nil {
		n = append(n, "uTLS ClientHello preset: key-exchange groups are the preset's, not {TLS.Curves}")
	}
	switch {
	case c.Lean != nil || c.why == "{TLS.Engine} std" || c.why == "":
	case c.http3:
		n = append(n, "HTTP/3 by quic-go's client, not the lean QUIC client: "+(&fields.UsageError{Msg: c.why}).Words(nil))
	default:
		n = append(n, "TLS handshakes by "+c.implementation()+", not the lean TLS 1.3 implementation: "+(&fields.UsageError{Msg: c.why}).Words(nil))
	}
	return n
}

func (c *TLSClient) implementation() string {
	switch {
	case c.Lean != nil:
		return "lean"
	case c.UTLS != nil:
		return "utls"
	}
	return "crypto/tls"
}

// Captured seconds that the first handshake's parameters are recorded
// (tlsfd.Capturer).
func (c *TLSClient) Captured() bool { return c.captured.Load() }

// Capture records what the first completed handshake negotiated
// (tlsfd.Capturer; HTTP/3 connections call it too).
func (c *TLSClient) Capture(s tlsfd.Session) {
	if c.captured.Load() {
		return
	}
	c.once.Do(func() {
		defer c.captured.Store(true)
		c.inf = result.TLSInfo{
			Version: tls.VersionName(s.Version),
			Cipher:  tls.CipherSuiteName(s.Suite),
			ALPN:    s.ALPN,
		}
		if s.Curve != 0 {
			c.inf.Curve = curveName(s.Curve)
		}
		if len(s.Peer) > 0 {
			c.inf.ServerKey = serverKeyName(s.Peer[0])
		}
	})
}

// The --curves names of Go's key-exchange groups (CurveID) and the uTLS
// ClientHello presets of --client-hello (HelloPreset).
var (
	curveIDs = map[string]tls.CurveID{
		"x25519":         tls.X25519,
		"p256":           tls.CurveP256,
		"p384":           tls.CurveP384,
		"p521":           tls.CurveP521,
		"x25519mlkem768": tls.X25519MLKEM768,
	}
	helloPresets = map[string]utls.ClientHelloID{
		"chrome":  utls.HelloChrome_Auto,
		"firefox": utls.HelloFirefox_Auto,
	}
)

// CurveID is the group a --curves name stands for.
func CurveID(name string) (tls.CurveID, bool) {
	id, ok := curveIDs[name]
	return id, ok
}

// HelloPreset reports whether name is a uTLS ClientHello preset.
func HelloPreset(name string) bool {
	_, ok := helloPresets[name]
	return ok
}

// UnwrapPathError is the cause inside an *os.PathError (the path is
// already in the caller's message).
func UnwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CaptureState records what a crypto/tls connection (quic-go's HTTP/3)
// negotiated, if it is the first (Capture).
func (c *TLSClient) CaptureState(st tls.ConnectionState) {
	c.Capture(tlsfd.Session{Version: st.Version, Suite: st.CipherSuite, Curve: st.CurveID, ALPN: st.NegotiatedProtocol, Peer: st.PeerCertificates})
}

// CaptureLean records what a lean handshake (the lean QUIC client's)
// negotiated, if it is the first (Capture).
func (c *TLSClient) CaptureLean(hs *tls13.Handshake) { c.Capture(tlsfd.LeanSession(hs)) }

// curveName names a group the way --curves does ("p256", not crypto/tls's
// "CurveP256").
func curveName(id tls.CurveID) string {
	for name, v := range curveIDs {
		if v == id {
			return name
		}
	}
	return strings.ToLower(id.String())
}

func (c *TLSClient) info(resumed, zeroRTT uint64) *result.TLSInfo {
	inf := c.inf
	inf.Resumed = resumed
	inf.ZeroRTT = zeroRTT
	inf.Engine = c.implementation()
	inf.ClientKeyShare = "fresh"
	if c.Lean != nil && !c.Lean.FreshKeyShare {
		inf.ClientKeyShare = "reused"
	}
	return &inf
}

// serverKeyName names a certificate's key the way results do:
// "ecdsa-p256", "rsa-2048", "rsa-4096", "ed25519".
func serverKeyName(cert *x509.Certificate) string {
	switch k := cert.PublicKey.(type) {
	case *ecdsa.PublicKey:
		return "ecdsa-" + strings.ToLower(strings.ReplaceAll(k.Curve.Params().Name, "-", ""))
	case *rsa.PublicKey:
		return fmt.Sprintf("rsa-%d", k.N.BitLen())
	case ed25519.PublicKey:
		return "ed25519"
	}
	return "unknown"
}
