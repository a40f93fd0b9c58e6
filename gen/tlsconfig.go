package gen

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
	"sync"

	utls "github.com/refraction-networking/utls"
)

// curveNames maps --curves names to Go's group IDs.
var curveNames = map[string]tls.CurveID{
	"x25519":         tls.X25519,
	"p256":           tls.CurveP256,
	"p384":           tls.CurveP384,
	"p521":           tls.CurveP521,
	"x25519mlkem768": tls.X25519MLKEM768,
}

// helloPresets maps --client-hello names to uTLS ClientHello presets.
var helloPresets = map[string]utls.ClientHelloID{
	"chrome":  utls.HelloChrome_Auto,
	"firefox": utls.HelloFirefox_Auto,
}

func (c *Config) validateTLS() error {
	t := c.TLS
	if t.Version != "1.2" && t.Version != "1.3" {
		return usage("bad --tls %q: use 1.2 or 1.3", t.Version)
	}
	for _, name := range t.Curves {
		if _, ok := curveNames[strings.ToLower(name)]; !ok {
			return usage("unknown curve %q: use x25519, p256, p384, p521 or x25519mlkem768", name)
		}
	}
	if _, ok := helloPresets[t.ClientHello]; !ok && t.ClientHello != "go" {
		return usage("unknown --client-hello %q: use go, chrome or firefox", t.ClientHello)
	}
	if t.CAFile != "" {
		if _, err := os.ReadFile(t.CAFile); err != nil {
			return usage("cannot read --ca %s: %v", t.CAFile, unwrapPathError(err))
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tlsClient builds the TLS state of new connections and remembers what the
// first handshake negotiated.
type tlsClient struct {
	std   *tls.Config
	u     *utls.Config
	hello utls.ClientHelloID

	resume bool // session tickets matter (--resume)

	once sync.Once
	inf  TLSInfo

	mu    sync.Mutex
	loops map[*loop]*tlsLoop
}

// loopState returns l's TLS scratch space (see tlsLoop).
func (c *tlsClient) loopState(l *loop) *tlsLoop {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.loops[l]
	if t == nil {
		if c.loops == nil {
			c.loops = make(map[*loop]*tlsLoop)
		}
		t = &tlsLoop{}
		c.loops[l] = t
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
			return nil, usage("cannot read --ca %s: %v", o.CAFile, unwrapPathError(err))
		}
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, usage("--ca %s holds no PEM certificate", o.CAFile)
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
	c := &tlsClient{resume: o.Resume}
	if o.ClientHello == "go" || o.ClientHello == "" {
		c.std = &tls.Config{
			ServerName:             sni,
			RootCAs:                roots,
			InsecureSkipVerify:     o.Insecure,
			MinVersion:             version,
			MaxVersion:             version,
			CurvePreferences:       curves,
			NextProtos:             []string{"http/1.1"},
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

// freshSpec returns a new copy of the preset for one connection (uTLS
// shares a spec's slices between the connections it is applied to), with
// ALPN narrowed to http/1.1: the presets offer h2, which this engine does
// not speak.
func (c *tlsClient) freshSpec() *utls.ClientHelloSpec {
	spec, _ := utls.UTLSIdToSpec(c.hello) // checked in newTLSClient
	for _, ext := range spec.Extensions {
		if a, ok := ext.(*utls.ALPNExtension); ok {
			a.AlpnProtocols = []string{"http/1.1"}
		}
	}
	return &spec
}

// notes returns remarks for the generator section of the result.
func (c *tlsClient) notes() []string {
	if c.u != nil {
		return []string{"uTLS ClientHello preset: key-exchange groups are the preset's, not --curves"}
	}
	return nil
}

// capture records what the first completed handshake negotiated.
func (c *tlsClient) capture(version, cipher uint16, curve tls.CurveID, alpn string, peer []*x509.Certificate) {
	c.once.Do(func() {
		c.inf = TLSInfo{
			Version: tls.VersionName(version),
			Cipher:  tls.CipherSuiteName(cipher),
			ALPN:    alpn,
		}
		if curve != 0 {
			c.inf.Curve = strings.ToLower(curve.String())
		}
		if len(peer) > 0 {
			c.inf.ServerKey = serverKeyName(peer[0])
		}
	})
}

func (c *tlsClient) info(resumed, zeroRTT uint64) *TLSInfo {
	inf := c.inf
	inf.Resumed = resumed
	inf.ZeroRTT = zeroRTT
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

// isTLSError reports errors that come from TLS itself (alerts, bad records,
// certificate verification), as opposed to the socket under it.
func isTLSError(err error) bool {
	var ae tls.AlertError
	var rhe tls.RecordHeaderError
	var cve *tls.CertificateVerificationError
	var uae utls.AlertError
	var urhe utls.RecordHeaderError
	var ucve *utls.CertificateVerificationError
	return errors.As(err, &ae) || errors.As(err, &rhe) || errors.As(err, &cve) ||
		errors.As(err, &uae) || errors.As(err, &urhe) || errors.As(err, &ucve) ||
		strings.HasPrefix(err.Error(), "tls: ") || strings.HasPrefix(err.Error(), "remote error: tls")
}
