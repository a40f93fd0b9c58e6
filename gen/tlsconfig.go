package gen

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/result"

	"github.com/loadlab/loadlab/gen/tls13"
	utls "github.com/refraction-networking/utls"
)

// tlsClient builds the TLS state of new connections (tlsfd.Client, which
// the TCP loops' connections share; HTTP/3 uses its crypto/tls
// configuration) and remembers what the first handshake negotiated: it is
// the Client's Observer.
type tlsClient struct {
	tlsfd.Client
	why   string // why the lean TLS 1.3 handshakes do not apply, if they do not
	http3 bool   // HTTP/3: lean means the lean QUIC client, std quic-go

	once     sync.Once
	captured atomic.Bool
	inf      result.TLSInfo
}

func newTLSClient(cfg *Prepared, t Target) (*tlsClient, error) {
	o := cfg.TLS
	sni := o.SNI
	if sni == "" {
		sni = t.Host
	}
	var roots *x509.CertPool
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fieldErr("TLS.CAFile", "cannot read %s: %v", o.CAFile, unwrapPathError(err))
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fieldErr("TLS.CAFile", "%s holds no PEM certificate", o.CAFile)
		}
	}
	version := uint16(tls.VersionTLS13)
	if o.Version == "1.2" {
		version = tls.VersionTLS12
	}
	var curves []tls.CurveID
	for _, n := range o.Curves {
		curves = append(curves, curveNames[strings.ToLower(n)])
	}
	c := &tlsClient{Client: tlsfd.Client{Resume: o.Resume, ALPN: cfg.alpn()}}
	c.Observer = c
	lean, why, err := cfg.leanTLS()
	if err != nil {
		return nil, err
	}
	c.why, c.http3 = why, cfg.HTTP3
	if lean {
		if c.Lean, err = newLeanConfig(o, sni, c.ALPN, roots, !cfg.HTTP3); err != nil {
			return nil, err
		}
	}
	if o.ClientHello == "go" || o.ClientHello == "" {
		c.Std = &tls.Config{
			ServerName:             sni,
			RootCAs:                roots,
			InsecureSkipVerify:     o.Insecure,
			MinVersion:             version,
			MaxVersion:             version,
			CurvePreferences:       curves,
			NextProtos:             []string{c.ALPN},
			SessionTicketsDisabled: !o.Resume,
		}
		if o.Resume {
			c.Std.ClientSessionCache = tls.NewLRUClientSessionCache(4096)
		}
		return c, nil
	}
	c.Hello = helloPresets[o.ClientHello]
	if _, err := utls.UTLSIdToSpec(c.Hello); err != nil {
		return nil, fmt.Errorf("client hello preset %s: %v", o.ClientHello, err)
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
func newLeanConfig(o TLSOptions, sni, alpn string, roots *x509.CertPool, prepare bool) (*tls13.Config, error) {
	lc := &tls13.Config{ServerName: sni, ALPN: []string{alpn}, FreshKeyShare: o.FreshKeyShare}
	for _, n := range o.Curves {
		g := tls13.X25519
		if strings.ToLower(n) == "p256" {
			g = tls13.P256
		}
		lc.Groups = append(lc.Groups, g)
	}
	for _, n := range o.Ciphers {
		s := tls13.SuiteByName(strings.ToLower(n))
		if s == nil {
			s = tls13.SuiteByName(n)
		}
		lc.Suites = append(lc.Suites, s.ID)
	}
	if !o.Insecure {
		if roots == nil {
			sys, err := x509.SystemCertPool()
			if err != nil {
				return nil, &UsageError{Field: "TLS.CAFile", Msg: fmt.Sprintf("no system certificate roots (%v): give a CA file or set {TLS.Insecure}", err)}
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
func (c *tlsClient) notes() []string {
	var n []string
	if c.UTLS != nil {
		n = append(n, "uTLS ClientHello preset: key-exchange groups are the preset's, not {TLS.Curves}")
	}
	switch {
	case c.Lean != nil || c.why == "{TLS.Engine} std" || c.why == "":
	case c.http3:
		n = append(n, "HTTP/3 by quic-go's client, not the lean QUIC client: "+(&UsageError{Msg: c.why}).Words(nil))
	default:
		n = append(n, "TLS handshakes by "+c.implementation()+", not the lean TLS 1.3 implementation: "+(&UsageError{Msg: c.why}).Words(nil))
	}
	return n
}

func (c *tlsClient) implementation() string {
	switch {
	case c.Lean != nil:
		return "lean"
	case c.UTLS != nil:
		return "utls"
	}
	return "crypto/tls"
}

// Captured reports that the first handshake's parameters are recorded
// (tlsfd.Observer).
func (c *tlsClient) Captured() bool { return c.captured.Load() }

// Capture records what the first completed handshake negotiated
// (tlsfd.Observer; HTTP/3 connections call it too).
func (c *tlsClient) Capture(s tlsfd.Session) {
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

// curveName names a group the way --curves does ("p256", not crypto/tls's
// "CurveP256").
func curveName(id tls.CurveID) string {
	for name, v := range curveNames {
		if v == id {
			return name
		}
	}
	return strings.ToLower(id.String())
}

func (c *tlsClient) info(resumed, zeroRTT uint64) *result.TLSInfo {
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
