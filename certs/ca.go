package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"fmt"
	"math/big"
	"time"
)

// caLifetime is the minimum lifetime of a new CA.
const caLifetime = 10 * 365 * 24 * time.Hour

// ca is a loaded or new local CA.
type ca struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte // ca.pem as on disk
}

// ensureCA loads the CA of n.dir if it is usable, or creates a new one.
// It returns why it created one ("" when reused).
func ensureCA(n normalized) (*ca, string, error) {
	p := CAPathsFor(n.dir)
	if err := ensureDir(p.Dir); err != nil {
		return nil, "", err
	}
	c, why := loadCA(p, n)
	if why == "" {
		if err := ensureMode(p.Key, secretMode); err != nil {
			return nil, "", err
		}
		if err := ensureMode(p.Cert, publicMode); err != nil {
			return nil, "", err
		}
		return c, "", nil
	}
	c, err := newCA(n)
	if err != nil {
		return nil, "", err
	}
	keyPEM, err := encodeKey(c.key)
	if err != nil {
		return nil, "", err
	}
	if err := writeAtomic(p.Key, keyPEM, secretMode); err != nil {
		return nil, "", err
	}
	if err := writeAtomic(p.Cert, c.pem, publicMode); err != nil {
		return nil, "", err
	}
	return c, why, nil
}

// loadCA reads the CA at p and returns why it is unusable ("" if usable).
func loadCA(p CAPaths, n normalized) (*ca, string) {
	cert, certPEM, err := readCert(p.Cert)
	if missing(err) {
		return nil, "missing"
	}
	if err != nil {
		return nil, "unreadable: " + err.Error()
	}
	key, _, err := readKey(p.Key)
	if missing(err) {
		return nil, "key missing"
	}
	if err != nil {
		return nil, "key unreadable: " + err.Error()
	}
	switch {
	case !keyMatches(key, cert.PublicKey):
		return nil, "key does not match certificate"
	case !cert.IsCA || !cert.BasicConstraintsValid || cert.KeyUsage&x509.KeyUsageCertSign == 0:
		return nil, "certificate is not a CA"
	case n.now.Before(cert.NotBefore):
		return nil, "not valid until " + cert.NotBefore.UTC().Format(time.RFC3339)
	case cert.NotAfter.Sub(n.now) < n.validity+n.margin:
		return nil, "expires " + cert.NotAfter.UTC().Format(time.RFC3339) + ", before a new leaf would"
	}
	return &ca{cert: cert, key: key, pem: certPEM}, ""
}

// newCA creates an ECDSA P-256 CA that outlives any leaf it will sign.
func newCA(n normalized) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate CA key: %w", err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "loadlab local CA " + hex.EncodeToString(serial.Bytes()[:4]), Organization: []string{"loadlab"}},
		NotBefore:             n.now.Add(-time.Hour),
		NotAfter:              n.now.Add(max(caLifetime, n.validity+365*24*time.Hour)),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse new CA certificate: %w", err)
	}
	return &ca{cert: cert, key: key, pem: encodeCert(der)}, nil
}

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() (*big.Int, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("random serial: %w", err)
	}
	b[0] &= 0x7f
	b[0] |= 0x40 // keep 16 bytes so the CA name suffix is always 8 hex digits
	return new(big.Int).SetBytes(b), nil
}
