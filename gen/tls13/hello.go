package tls13

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// Signature schemes offered (RFC 8446 §4.2.3). CertificateVerify may use
// the ECDSA, RSA-PSS and Ed25519 ones; the PKCS #1 v1.5 ones are for
// certificate chains signed that way.
const (
	sigECDSAP256SHA256 = 0x0403
	sigECDSAP384SHA384 = 0x0503
	sigECDSAP521SHA512 = 0x0603
	sigPSSRSAESHA256   = 0x0804
	sigPSSRSAESHA384   = 0x0805
	sigPSSRSAESHA512   = 0x0806
	sigEd25519         = 0x0807
	sigPKCS1SHA256     = 0x0401
	sigPKCS1SHA384     = 0x0501
	sigPKCS1SHA512     = 0x0601
)

var signatureSchemes = []uint16{
	sigPSSRSAESHA256, sigECDSAP256SHA256, sigEd25519, sigPSSRSAESHA384, sigPSSRSAESHA512,
	sigPKCS1SHA256, sigPKCS1SHA384, sigPKCS1SHA512, sigECDSAP384SHA384, sigECDSAP521SHA512,
}

// Config is what the handshakes of one run share. Set the fields, then call
// Prepare once; after that the Config is read-only and may be shared by
// the Clients of several goroutines.
type Config struct {
	// ServerName is sent as SNI (unless it is an IP address, which RFC 6066
	// does not allow there) and is the name the certificate must be for.
	ServerName string
	// ALPN protocols to offer, e.g. "http/1.1". Empty: no ALPN.
	ALPN []string
	// Suites to offer, in order of preference; nil: DefaultSuites.
	Suites []uint16
	// Groups to support, in order of preference; the first gets a key share
	// in the first ClientHello, a later one only after a HelloRetryRequest.
	// nil: X25519.
	Groups []Group
	// Verifier checks the server's chain and CertificateVerify; nil skips
	// both (insecure: any server, any key).
	Verifier *Verifier
	// FreshKeyShare makes a new key pair for every handshake instead of one
	// per Client.
	FreshKeyShare bool
	// QUIC makes the handshake carry QUIC's (RFC 9001 §4, §8): the
	// ClientHello has an empty legacy_session_id and the
	// quic_transport_parameters extension, there is no ChangeCipherSpec
	// and no record layer (see Handshake.ReadQUIC). Set ALPN too (h3):
	// QUIC requires it.
	QUIC bool
	// QUICTransportParams is the body of the quic_transport_parameters
	// extension (QUIC only), encoded by the caller.
	QUICTransportParams []byte

	hello     []byte // the first ClientHello record, key share zeroed
	offRand   int    // where the random is in hello
	offSID    int    // where the legacy session id is (-1: empty, QUIC)
	offShare  int    // where the key share's public key is
	offParams int    // QUIC: where the transport parameters are
}

// Prepare checks the Config and serializes the ClientHello template.
func (c *Config) Prepare() error {
	if c.Suites == nil {
		c.Suites = DefaultSuites()
	}
	if len(c.Suites) == 0 {
		return errors.New("tls13: no cipher suite to offer")
	}
	for _, id := range c.Suites {
		if SuiteByID(id) == nil {
			return fmt.Errorf("tls13: cipher suite %#04x not supported", id)
		}
	}
	if c.Groups == nil {
		c.Groups = []Group{X25519}
	}
	if len(c.Groups) == 0 {
		return errors.New("tls13: no key-exchange group to offer")
	}
	for _, g := range c.Groups {
		if g != X25519 && g != P256 {
			return fmt.Errorf("tls13: key-exchange group %#04x not supported (x25519 and p256 are)", uint16(g))
		}
	}
	for _, p := range c.ALPN {
		if len(p) == 0 || len(p) > 255 {
			return fmt.Errorf("tls13: bad ALPN protocol %q", p)
		}
	}
	if c.QUIC && len(c.ALPN) == 0 {
		return errors.New("tls13: QUIC needs an ALPN protocol (h3)")
	}
	if len(c.QUICTransportParams) > 1024 {
		return errors.New("tls13: QUIC transport parameters longer than 1024 bytes")
	}
	if len(c.ServerName) > 255 {
		return errors.New("tls13: server name longer than 255 bytes")
	}
	g := c.Groups[0]
	var random, sid [32]byte
	c.hello, c.offRand, c.offSID, c.offShare = c.appendHello(nil, &random, &sid, g, make([]byte, g.shareLen()), nil)
	return nil
}

// sni returns the name to send in server_name, or "" for none.
func (c *Config) sni() string {
	if _, err := netip.ParseAddr(c.ServerName); err == nil {
		return ""
	}
	return c.ServerName
}

// appendHello appends a ClientHello record to dst: the random and legacy
// session id given, one key share (group g, public key pub), and the
// cookie of a HelloRetryRequest if any. It returns the record and the
// offsets of the random, the session id and the public key in it.
func (c *Config) appendHello(dst []byte, random, sid *[32]byte, g Group, pub, cookie []byte) (rec []byte, offRand, offSID, offShare int) {
	start := len(dst)
	b := append(dst, TypeHandshake, 3, 1, 0, 0) // record header, length below
	b = append(b, typeClientHello, 0, 0, 0)     // message header, length below
	b = append(b, 3, 3)                         // legacy_version TLS 1.2
	offRand = len(b) - start
	b = append(b, random[:]...)
	if c.QUIC {
		b = append(b, 0) // RFC 9001 §8.4: no legacy session id
		offSID = -1
	} else {
		b = append(b, 32)
		offSID = len(b) - start
		b = append(b, sid[:]...)
	}
	b = appendU16(b, uint16(2*len(c.Suites)))
	for _, s := range c.Suites {
		b = appendU16(b, s)
	}
	b = append(b, 1, 0) // compression: null only
	extStart := len(b)
	b = append(b, 0, 0)
	if name := c.sni(); name != "" {
		b = appendU16(b, extServerName)
		b = appendU16(b, uint16(2+1+2+len(name)))
		b = appendU16(b, uint16(1+2+len(name)))
		b = append(b, 0) // host_name
		b = appendU16(b, uint16(len(name)))
		b = append(b, name...)
	}
	b = appendU16(b, extSupportedGroups)
	b = appendU16(b, uint16(2+2*len(c.Groups)))
	b = appendU16(b, uint16(2*len(c.Groups)))
	for _, grp := range c.Groups {
		b = appendU16(b, uint16(grp))
	}
	b = appendU16(b, extSignatureAlgorithms)
	b = appendU16(b, uint16(2+2*len(signatureSchemes)))
	b = appendU16(b, uint16(2*len(signatureSchemes)))
	for _, s := range signatureSchemes {
		b = appendU16(b, s)
	}
	if len(c.ALPN) > 0 {
		n := 0
		for _, p := range c.ALPN {
			n += 1 + len(p)
		}
		b = appendU16(b, extALPN)
		b = appendU16(b, uint16(2+n))
		b = appendU16(b, uint16(n))
		for _, p := range c.ALPN {
			b = append(b, byte(len(p)))
			b = append(b, p...)
		}
	}
	if c.QUIC {
		b = appendU16(b, extQUICTransportParams)
		b = appendU16(b, uint16(len(c.QUICTransportParams)))
		c.offParams = len(b) - start // the same in every ClientHello: nothing before it varies
		b = append(b, c.QUICTransportParams...)
	}
	b = appendU16(b, extSupportedVersions)
	b = append(b, 0, 3, 2, 3, 4)
	if len(cookie) > 0 {
		b = appendU16(b, extCookie)
		b = appendU16(b, uint16(2+len(cookie)))
		b = appendU16(b, uint16(len(cookie)))
		b = append(b, cookie...)
	}
	b = appendU16(b, extKeyShare)
	b = appendU16(b, uint16(2+2+2+len(pub)))
	b = appendU16(b, uint16(2+2+len(pub)))
	b = appendU16(b, uint16(g))
	b = appendU16(b, uint16(len(pub)))
	offShare = len(b) - start
	b = append(b, pub...)

	putU16(b[extStart:], uint16(len(b)-extStart-2))
	msgLen := len(b) - start - RecordHeaderLen - 4
	b[start+RecordHeaderLen+1], b[start+RecordHeaderLen+2], b[start+RecordHeaderLen+3] = byte(msgLen>>16), byte(msgLen>>8), byte(msgLen)
	putU16(b[start+3:], uint16(len(b)-start-RecordHeaderLen))
	return b[start:], offRand, offSID, offShare
}

func appendU16(b []byte, v uint16) []byte { return append(b, byte(v>>8), byte(v)) }
func putU16(b []byte, v uint16)           { b[0], b[1] = byte(v>>8), byte(v) }

func (c *Config) offers(suite uint16) bool { return slices.Contains(c.Suites, suite) }

func (c *Config) supports(g Group) bool { return slices.Contains(c.Groups, g) }
