package testutil

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/certs"
)

// CertNames are the names the test certificates cover: certs' defaults
// (localhost, 127.0.0.1, ::1) and the lab's test server name.
var CertNames = []string{"localhost", "127.0.0.1", "::1", "bench.lab"}

// CertDir returns a certificate directory made by certs.Ensure: a local CA
// and a leaf of each key type (P-256, RSA 2048, RSA 4096) for CertNames. It
// is shared by the test binaries of the machine (certs.Ensure locks it and
// reuses valid files), so only the first test pays for the keys.
func CertDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "loadlab-test-certs")
	if _, err := certs.Ensure(certs.Options{Dir: dir, Keys: certs.AllKeyTypes(), Names: CertNames}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Cert returns the files of the test certificate with key type k (see
// CertDir); its CA file is Paths.CA.
func Cert(t testing.TB, k certs.KeyType) certs.Paths {
	t.Helper()
	return certs.PathsFor(CertDir(t), k)
}

// KeyPair returns the test certificate with key type k, for a server.
func KeyPair(t testing.TB, k certs.KeyType) tls.Certificate {
	t.Helper()
	c, err := Cert(t, k).LoadKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// CertPool returns a pool that trusts the test certificates (their CA).
func CertPool(t testing.TB) *x509.CertPool {
	t.Helper()
	pool, err := Cert(t, certs.P256).CertPool()
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// OtherCA returns the CA file of a second certificate directory: a CA that
// signed none of CertDir's certificates (a client that trusts it alone
// fails verification).
func OtherCA(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(os.TempDir(), "loadlab-test-certs-other")
	if _, err := certs.Ensure(certs.Options{Dir: dir, Keys: []certs.KeyType{certs.P256}}); err != nil {
		t.Fatal(err)
	}
	return certs.PathsFor(dir, certs.P256).CA
}
