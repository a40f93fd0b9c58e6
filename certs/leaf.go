package certs

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// leafState is what checkLeaf found on disk.
type leafState struct {
	certPEM, keyPEM []byte
	why             string // why the leaf must be regenerated; "" = reusable
}

// ensureLeaf makes sure DIR/<k> holds a valid leaf signed by c and the files
// derived from it. It returns the action taken and why.
func ensureLeaf(n normalized, c *ca, k KeyType) (Action, string, error) {
	p := PathsFor(n.dir, k)
	if err := ensureDir(p.Dir); err != nil {
		return "", "", err
	}
	st := checkLeaf(p, n, c, k)
	action, why := Reused, ""
	if st.why != "" {
		var err error
		if st.certPEM, st.keyPEM, err = newLeaf(n, c, k); err != nil {
			return "", "", err
		}
		if err := writeAtomic(p.Key, st.keyPEM, secretMode); err != nil {
			return "", "", err
		}
		if err := writeAtomic(p.Cert, st.certPEM, publicMode); err != nil {
			return "", "", err
		}
		action, why = Created, st.why
	}
	fixed, err := writeDerived(p, c.pem, st.certPEM, st.keyPEM)
	if err != nil {
		return "", "", err
	}
	if action == Reused && len(fixed) > 0 {
		action, why = Repaired, "rewrote "+strings.Join(fixed, ", ")
	}
	return action, why, nil
}

// writeDerived writes ca.pem, fullchain.pem and cert+key.pem where they are
// missing or stale, fixes file modes, and names the files it rewrote.
func writeDerived(p Paths, caPEM, certPEM, keyPEM []byte) ([]string, error) {
	derived := []struct {
		path string
		data []byte
		mode fs.FileMode
	}{
		{p.CA, caPEM, publicMode},
		{p.FullChain, concat(certPEM, caPEM), publicMode},
		{p.Combined, concat(certPEM, caPEM, keyPEM), secretMode},
	}
	var fixed []string
	for _, f := range derived {
		if sameFile(f.path, f.data) {
			continue
		}
		if err := writeAtomic(f.path, f.data, f.mode); err != nil {
			return nil, err
		}
		fixed = append(fixed, filepath.Base(f.path))
	}
	modes := map[string]fs.FileMode{p.Cert: publicMode, p.Key: secretMode, p.CA: publicMode, p.FullChain: publicMode, p.Combined: secretMode}
	for path, mode := range modes {
		if err := ensureMode(path, mode); err != nil {
			return nil, err
		}
	}
	return fixed, nil
}

// checkLeaf loads the leaf at p and says why it must be regenerated.
func checkLeaf(p Paths, n normalized, c *ca, k KeyType) leafState {
	cert, certPEM, err := readCert(p.Cert)
	if missing(err) {
		return leafState{why: "missing"}
	}
	if err != nil {
		return leafState{why: "unreadable: " + err.Error()}
	}
	key, keyPEM, err := readKey(p.Key)
	if missing(err) {
		return leafState{why: "key missing"}
	}
	if err != nil {
		return leafState{why: "key unreadable: " + err.Error()}
	}
	if got, desc := publicKeyType(cert.PublicKey); got != k {
		return leafState{why: fmt.Sprintf("key is %s, want %s", desc, k.ServerKeyName())}
	}
	if !keyMatches(key, cert.PublicKey) {
		return leafState{why: "key does not match certificate"}
	}
	if err := cert.CheckSignatureFrom(c.cert); err != nil || !bytes.Equal(cert.RawIssuer, c.cert.RawSubject) {
		return leafState{why: "not signed by the CA in " + CAPathsFor(n.dir).Cert}
	}
	if cert.NotAfter.Sub(n.now) < n.margin {
		return leafState{why: "expires " + cert.NotAfter.UTC().Format(time.RFC3339)}
	}
	if n.now.Before(cert.NotBefore) {
		return leafState{why: "not valid until " + cert.NotBefore.UTC().Format(time.RFC3339)}
	}
	if lack := missingNames(cert, n); len(lack) > 0 {
		return leafState{why: "SANs lack " + strings.Join(lack, ", ")}
	}
	roots := x509.NewCertPool()
	roots.AddCert(c.cert)
	opts := x509.VerifyOptions{Roots: roots, CurrentTime: n.now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := cert.Verify(opts); err != nil {
		return leafState{why: "does not verify: " + err.Error()}
	}
	return leafState{certPEM: certPEM, keyPEM: keyPEM}
}

// missingNames lists the requested names that cert's SANs do not hold.
func missingNames(cert *x509.Certificate, n normalized) []string {
	var lack []string
	for _, d := range n.dns {
		if !slices.ContainsFunc(cert.DNSNames, func(s string) bool { return strings.EqualFold(s, d) }) {
			lack = append(lack, d)
		}
	}
	for _, ip := range n.ips {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			lack = append(lack, ip.String())
		}
	}
	return lack
}

// newLeaf creates a key of type k and a leaf for n's names signed by c.
func newLeaf(n normalized, c *ca, k KeyType) (certPEM, keyPEM []byte, err error) {
	key, err := newKey(k)
	if err != nil {
		return nil, nil, fmt.Errorf("generate %s key: %w", k.ServerKeyName(), err)
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	cn := ""
	if len(n.dns) > 0 {
		cn = n.dns[0]
	} else if len(n.ips) > 0 {
		cn = n.ips[0].String()
	}
	usage := x509.KeyUsageDigitalSignature
	if _, isRSA := key.Public().(*rsa.PublicKey); isRSA {
		usage |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"loadlab"}},
		NotBefore:             n.now.Add(-time.Hour),
		NotAfter:              minTime(n.now.Add(n.validity), c.cert.NotAfter),
		KeyUsage:              usage,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		DNSNames:              n.dns,
		IPAddresses:           n.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign %s leaf: %w", k.ServerKeyName(), err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

// minTime returns the earlier of a and b.
func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// concat joins PEM blobs.
func concat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
