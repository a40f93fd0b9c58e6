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

	"github.com/loadlab/loadlab/gen/tls13"
	utls "github.com/refraction-networking/utls"
)

// tlsClient builds the TLS state of new connections and remembers what the
// first handshake negotiated.
type tlsClient struct {
	std   *tls.Config
	u     *utls.Config
	hello utls.ClientHelloID
	lean  *tls13.Config // non-nil: handshakes are package tls13's
	why   string        // why the lean engine does not apply, if it does not

	resume bool   // session tickets matter (--resume)
	alpn   string // the one protocol offered (ALPN; "" is http/1.1); an h2 connection that does not get it fails

	once     sync.Once
	captured atomic.Bool
	inf      TLSInfo
}

// loopState returns a new loop's TLS scratch space (see tlsLoop).
func (c *tlsClient) loopState() *tlsLoop {
	t := &tlsLoop{client: c}
	if c.lean != nil {
		t.lean, t.leanErr = tls13.NewClient(c.lean)
		if t.lean != nil {
			t.lean.KeepLeaf = !c.captured.Load()
		}
	}
	return t
}

func newTLSClient(cfg *Config, t Target) (*tlsClient, error) {
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
	c := &tlsClient{resume: o.Resume, alpn: cfg.alpn()}
	lean, why, err := cfg.leanEngine()
	if err != nil {
		return nil, err
	}
	c.why = why
	if lean {
		if c.lean, err = newLeanConfig(o, sni, c.alpn, roots); err != nil {
			return nil, err
		}
	}
	if o.ClientHello == "go" || o.ClientHello == "" {
		c.std = &tls.Config{
			ServerName:             sni,
			RootCAs:                roots,
			InsecureSkipVerify:     o.Insecure,
			MinVersion:             version,
			MaxVersion:             version,
			CurvePreferences:       curves,
			NextProtos:             []string{c.alpn},
			SessionTicketsDisabled: !o.Resume,
		}
		if o.Resume {
			c.std.ClientSessionCache = tls.NewLRUClientSessionCache(4096)
		}
		return c, nil
	}
	c.hello = helloPresets[o.ClientHello]
	if _, err := utls.UTLSIdToSpec(c.hello); err != nil {
		return nil, fmt.Errorf("client hello preset %s: %v", o.ClientHello, err)
	}
	c.u = &utls.Config{
		ServerName:             sni,
		RootCAs:                roots,
		InsecureSkipVerify:     o.Insecure,
		SessionTicketsDisabled: !o.Resume,
	}
	if o.Resume {
		c.u.ClientSessionCache = utls.NewLRUClientSessionCache(4096)
	}
	return c, nil
}

// newLeanConfig builds the tls13 configuration: roots nil means the
// system's (as crypto/tls does), unless --insecure.
func newLeanConfig(o TLSOptions, sni, alpn string, roots *x509.CertPool) (*tls13.Config, error) {
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
	if err := lc.Prepare(); err != nil {
		return nil, err
	}
	return lc, nil
}

// freshSpec returns a new copy of the preset for one connection (uTLS
// shares a spec's slices between the connections it is applied to), with
// ALPN narrowed to the run's protocol: the presets offer h2 and http/1.1,
// and a run speaks one of them.
func (c *tlsClient) freshSpec() *utls.ClientHelloSpec {
	spec, _ := utls.UTLSIdToSpec(c.hello) // checked in newTLSClient
	alpn := c.alpn
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

// notes returns remarks for the generator section of the result.
func (c *tlsClient) notes() []string {
	var n []string
	if c.u != nil {
		n = append(n, "uTLS ClientHello preset: key-exchange groups are the preset's, not --curves")
	}
	if c.lean == nil && c.why != "{TLS.Engine} std" && c.why != "" && !strings.HasPrefix(c.why, "HTTP/3") {
		n = append(n, "TLS handshakes by "+c.engineName()+", not the lean TLS 1.3 engine: "+(&UsageError{Msg: c.why}).Words(nil))
	}
	return n
}

func (c *tlsClient) engineName() string {
	switch {
	case c.lean != nil:
		return "lean"
	case c.u != nil:
		return "utls"
	}
	return "crypto/tls"
}

// captureLean records what the first completed lean handshake negotiated.
// After that it returns at once, without allocating.
func (c *tlsClient) captureLean(tl *tlsLoop, hs *tls13.Handshake) {
	if c.captured.Load() {
		tl.lean.KeepLeaf = false
		return
	}
	var peer []*x509.Certificate
	if cert, err := x509.ParseCertificate(hs.Leaf()); err == nil {
		peer = []*x509.Certificate{cert}
	}
	curve := tls.X25519
	if hs.Group() == tls13.P256 {
		curve = tls.CurveP256
	}
	c.capture(tls.VersionTLS13, hs.Suite().ID, curve, hs.ALPN(), peer)
}

// capture records what the first completed handshake negotiated.
func (c *tlsClient) capture(version, cipher uint16, curve tls.CurveID, alpn string, peer []*x509.Certificate) {
	if c.captured.Load() {
		return
	}
	c.once.Do(func() {
		defer c.captured.Store(true)
		c.inf = TLSInfo{
			Version: tls.VersionName(version),
			Cipher:  tls.CipherSuiteName(cipher),
			ALPN:    alpn,
		}
		if curve != 0 {
			c.inf.Curve = curveName(curve)
		}
		if len(peer) > 0 {
			c.inf.ServerKey = serverKeyName(peer[0])
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

func (c *tlsClient) info(resumed, zeroRTT uint64) *TLSInfo {
	inf := c.inf
	inf.Resumed = resumed
	inf.ZeroRTT = zeroRTT
	inf.Engine = c.engineName()
	inf.ClientKeyShare = "fresh"
	if c.lean != nil && !c.lean.FreshKeyShare {
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
