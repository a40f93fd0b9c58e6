package tls13

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"hash"
	"sync"
	"time"
)

// Verifier checks server certificate chains against a root pool, once per
// distinct chain: results (good or bad) are kept in a bounded cache keyed
// by the SHA-256 of the chain's DER certificates. A cached good result
// holds until the chain's first certificate expiry. Safe for concurrent
// use.
type Verifier struct {
	roots *x509.CertPool
	name  string
	max   int
	now   func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]*chainResult
	order   [][32]byte // insertion order, for eviction
	misses  int        // chains verified (cache misses), for tests
}

type chainResult struct {
	pub     crypto.PublicKey // the leaf's key, for CertificateVerify
	err     error
	expires time.Time
}

// DefaultVerifierCache is the number of distinct chains a Verifier keeps.
const DefaultVerifierCache = 256

// NewVerifier returns a Verifier for chains that must lead to roots and be
// valid for serverName (a DNS name or an IP address), keeping up to max
// results (max <= 0: DefaultVerifierCache).
func NewVerifier(roots *x509.CertPool, serverName string, max int) *Verifier {
	if max <= 0 {
		max = DefaultVerifierCache
	}
	return &Verifier{roots: roots, name: serverName, max: max, now: time.Now, entries: make(map[[32]byte]*chainResult)}
}

// Verified returns how many chains were verified (cache misses).
func (v *Verifier) Verified() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.misses
}

// chainKey hashes the chain's certificates (each prefixed with its length).
func chainKey(h hash.Hash, chain [][]byte, key *[32]byte, lenBuf *[4]byte) {
	h.Reset()
	for _, der := range chain {
		n := len(der)
		lenBuf[0], lenBuf[1], lenBuf[2], lenBuf[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		h.Write(lenBuf[:])
		h.Write(der)
	}
	h.Sum(key[:0])
}

// check returns the leaf's public key if the chain whose key is k verifies.
func (v *Verifier) check(k *[32]byte, chain [][]byte) (crypto.PublicKey, error) {
	now := v.now()
	v.mu.Lock()
	r := v.entries[*k]
	v.mu.Unlock()
	if r != nil && (r.err != nil || now.Before(r.expires)) {
		return r.pub, r.err
	}
	r = v.verify(chain, now)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.misses++
	if _, ok := v.entries[*k]; !ok {
		if len(v.order) >= v.max {
			delete(v.entries, v.order[0])
			v.order = append(v.order[:0], v.order[1:]...)
		}
		v.order = append(v.order, *k)
	}
	v.entries[*k] = r
	return r.pub, r.err
}

// verify parses and verifies one chain (the slow path).
func (v *Verifier) verify(chain [][]byte, now time.Time) *chainResult {
	certs := make([]*x509.Certificate, len(chain))
	for i, der := range chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return &chainResult{err: fail(alertBadCertificate, "tls: failed to parse the server's certificate: "+err.Error())}
		}
		certs[i] = c
	}
	opts := x509.VerifyOptions{
		Roots:         v.roots,
		DNSName:       v.name,
		CurrentTime:   now,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &chainResult{err: fail(alertBadCertificate, "tls: failed to verify certificate: "+err.Error())}
	}
	expires := certs[0].NotAfter
	for _, c := range certs[1:] {
		if c.NotAfter.Before(expires) {
			expires = c.NotAfter
		}
	}
	switch certs[0].PublicKey.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
	default:
		return &chainResult{err: fail(alertUnsupportedCert, "tls: the server's certificate has an unsupported public key type")}
	}
	return &chainResult{pub: certs[0].PublicKey, expires: expires}
}

// serverSignatureContext starts the content a server's CertificateVerify
// signs (RFC 8446 §4.4.3), after 64 spaces.
const serverSignatureContext = "TLS 1.3, server CertificateVerify\x00"

var pssOptions = rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash}

var (
	errSigScheme = fail(alertIllegalParameter, "tls: the server's CertificateVerify uses a signature scheme the client did not offer or that does not fit its key")
	errSignature = fail(alertDecryptError, "tls: invalid CertificateVerify signature by the server's certificate")
)

// sigVerifier checks CertificateVerify signatures with reused scratch.
type sigVerifier struct {
	h      [3]hash.Hash // SHA-256, SHA-384, SHA-512
	signed []byte
	digest [64]byte
}

func newSigVerifier() *sigVerifier {
	s := &sigVerifier{h: [3]hash.Hash{crypto.SHA256.New(), crypto.SHA384.New(), crypto.SHA512.New()}}
	s.signed = make([]byte, 0, 64+len(serverSignatureContext)+64)
	return s
}

// check verifies sig, made with scheme by pub, over the transcript hash th.
func (s *sigVerifier) check(pub crypto.PublicKey, scheme uint16, sig, th []byte) error {
	msg := s.signed[:0]
	for i := 0; i < 64; i++ {
		msg = append(msg, ' ')
	}
	msg = append(msg, serverSignatureContext...)
	msg = append(msg, th...)
	s.signed = msg

	var hi int
	var h crypto.Hash
	var curve elliptic.Curve
	switch scheme {
	case sigECDSAP256SHA256:
		hi, h, curve = 0, crypto.SHA256, elliptic.P256()
	case sigECDSAP384SHA384:
		hi, h, curve = 1, crypto.SHA384, elliptic.P384()
	case sigECDSAP521SHA512:
		hi, h, curve = 2, crypto.SHA512, elliptic.P521()
	case sigPSSRSAESHA256:
		hi, h = 0, crypto.SHA256
	case sigPSSRSAESHA384:
		hi, h = 1, crypto.SHA384
	case sigPSSRSAESHA512:
		hi, h = 2, crypto.SHA512
	case sigEd25519:
		k, ok := pub.(ed25519.PublicKey)
		if !ok {
			return errSigScheme
		}
		if !ed25519.Verify(k, msg, sig) {
			return errSignature
		}
		return nil
	default:
		return errSigScheme
	}
	d := s.h[hi]
	d.Reset()
	d.Write(msg)
	digest := d.Sum(s.digest[:0])
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if curve == nil || k.Curve != curve {
			return errSigScheme
		}
		if !ecdsa.VerifyASN1(k, digest, sig) {
			return errSignature
		}
	case *rsa.PublicKey:
		if curve != nil {
			return errSigScheme
		}
		if err := rsa.VerifyPSS(k, h, digest, sig, &pssOptions); err != nil {
			return errSignature
		}
	default:
		return errSigScheme
	}
	return nil
}
