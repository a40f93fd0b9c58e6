package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSharedCreated(t *testing.T) {
	if sharedResult.CAAction != Created || sharedResult.CAReason != "missing" {
		t.Errorf("CA action %s (%s), want created (missing)", sharedResult.CAAction, sharedResult.CAReason)
	}
	for _, k := range AllKeyTypes() {
		l, ok := sharedResult.Leaves[k]
		if !ok || l.Action != Created || l.Reason != "missing" {
			t.Errorf("%s: %+v", k, l)
		}
		if l.Paths != PathsFor(sharedDir, k) {
			t.Errorf("%s paths %+v", k, l.Paths)
		}
	}
}

func TestFilesAndModes(t *testing.T) {
	want := map[string]fs.FileMode{
		sharedDir: 0o700, filepath.Join(sharedDir, "ca"): 0o700,
		CAPathsFor(sharedDir).Cert: 0o644, CAPathsFor(sharedDir).Key: 0o600,
	}
	for _, k := range AllKeyTypes() {
		p := PathsFor(sharedDir, k)
		if p.Dir != filepath.Join(sharedDir, string(k)) || p.Combined != filepath.Join(p.Dir, "cert+key.pem") {
			t.Errorf("PathsFor(%s) = %+v", k, p)
		}
		want[p.Dir] = 0o700
		want[p.Cert], want[p.FullChain], want[p.CA] = 0o644, 0o644, 0o644
		want[p.Key], want[p.Combined] = 0o600, 0o600
	}
	for path, mode := range want {
		st, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode %o, want %o", path, st.Mode().Perm(), mode)
		}
	}
}

func TestLeafVerifiesForEachName(t *testing.T) {
	for _, k := range AllKeyTypes() {
		p := PathsFor(sharedDir, k)
		pool, err := p.CertPool()
		if err != nil {
			t.Fatal(err)
		}
		leaf := mustCert(t, p.Cert)
		for _, name := range DefaultNames {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
				t.Errorf("%s leaf does not verify for %s: %v", k, name, err)
			}
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "example.com"}); err == nil {
			t.Errorf("%s leaf verifies for a name it does not hold", k)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "localhost"}); err == nil {
			t.Errorf("%s leaf verifies without trusting the local CA", k)
		}
		if !bytes.Equal(mustRead(t, p.CA), mustRead(t, CAPathsFor(sharedDir).Cert)) {
			t.Errorf("%s ca.pem differs from the CA", k)
		}
	}
}

func TestKeyTypesOnDisk(t *testing.T) {
	for _, k := range AllKeyTypes() {
		p := PathsFor(sharedDir, k)
		leaf := mustCert(t, p.Cert)
		key, _, err := readKey(p.Key)
		if err != nil {
			t.Fatal(err)
		}
		switch k {
		case P256:
			pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
			if !ok || pub.Curve != elliptic.P256() {
				t.Errorf("p256 leaf has %T", leaf.PublicKey)
			}
			if _, ok := key.(*ecdsa.PrivateKey); !ok {
				t.Errorf("p256 key is %T", key)
			}
		case RSA2048, RSA4096:
			bits := map[KeyType]int{RSA2048: 2048, RSA4096: 4096}[k]
			pub, ok := leaf.PublicKey.(*rsa.PublicKey)
			if !ok || pub.N.BitLen() != bits {
				t.Errorf("%s leaf public key %T wrong size", k, leaf.PublicKey)
			}
			if priv, ok := key.(*rsa.PrivateKey); !ok || priv.N.BitLen() != bits {
				t.Errorf("%s key is %T", k, key)
			}
		}
		if !keyMatches(key, leaf.PublicKey) {
			t.Errorf("%s key does not match its certificate", k)
		}
		if got := leaf.NotAfter.Sub(leaf.NotBefore); got < DefaultValidity || got > DefaultValidity+2*time.Hour {
			t.Errorf("%s validity %v", k, got)
		}
	}
	ca := mustCert(t, CAPathsFor(sharedDir).Cert)
	if pub, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() || !ca.IsCA {
		t.Errorf("CA is not an ECDSA P-256 CA: %T", ca.PublicKey)
	}
}

func TestChainFiles(t *testing.T) {
	caPEM := mustRead(t, CAPathsFor(sharedDir).Cert)
	for _, k := range AllKeyTypes() {
		p := PathsFor(sharedDir, k)
		certPEM, keyPEM := mustRead(t, p.Cert), mustRead(t, p.Key)
		if got := mustRead(t, p.FullChain); !bytes.Equal(got, concat(certPEM, caPEM)) {
			t.Errorf("%s fullchain is not leaf+CA", k)
		}
		combined := mustRead(t, p.Combined)
		if !bytes.Equal(combined, concat(certPEM, caPEM, keyPEM)) {
			t.Errorf("%s cert+key.pem is not leaf+CA+key", k)
		}
		var types []string
		for rest := combined; ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
			types = append(types, b.Type)
		}
		if strings.Join(types, ",") != "CERTIFICATE,CERTIFICATE,PRIVATE KEY" {
			t.Errorf("%s cert+key.pem blocks %v", k, types)
		}
		if _, err := tls.X509KeyPair(combined, combined); err != nil {
			t.Errorf("%s cert+key.pem does not load as a key pair: %v", k, err)
		}
	}
}

func TestSecondEnsureChangesNothing(t *testing.T) {
	before := snapshot(t, sharedDir)
	r := mustEnsure(t, Options{Dir: sharedDir, Keys: []KeyType{RSA4096, P256, RSA2048}})
	if r.CAAction != Reused {
		t.Errorf("CA %s (%s)", r.CAAction, r.CAReason)
	}
	for k, l := range r.Leaves {
		if l.Action != Reused || l.Reason != "" {
			t.Errorf("%s: %s (%s)", k, l.Action, l.Reason)
		}
	}
	after := snapshot(t, sharedDir)
	if len(after) != len(before) {
		t.Fatalf("file count %d -> %d", len(before), len(after))
	}
	for path, b := range before {
		a, ok := after[path]
		if !ok || a.data != b.data || a.mode != b.mode || !a.mtime.Equal(b.mtime) {
			t.Errorf("%s changed", path)
		}
	}
	paths, err := Ensure(Options{Dir: sharedDir, Keys: []KeyType{P256}})
	if err != nil || len(paths) != 1 || paths[P256] != PathsFor(sharedDir, P256) {
		t.Errorf("Ensure = %v, %v", paths, err)
	}
}

func TestExpiringLeafRegenerated(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	mustEnsure(t, o)
	p := PathsFor(dir, P256)
	old := mustCert(t, p.Cert)

	o.now = at(DefaultValidity - 23*time.Hour) // within 24h of expiry
	r := mustEnsure(t, o)
	if l := r.Leaves[P256]; l.Action != Created || !strings.HasPrefix(l.Reason, "expires") {
		t.Fatalf("expiring leaf: %+v", l)
	}
	if r.CAAction != Reused {
		t.Fatalf("CA was %s (%s)", r.CAAction, r.CAReason)
	}
	renewed := mustCert(t, p.Cert)
	if renewed.SerialNumber.Cmp(old.SerialNumber) == 0 || !renewed.NotAfter.After(old.NotAfter) {
		t.Fatal("leaf not renewed")
	}

	o.now = at(3 * DefaultValidity) // long expired
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Created || !strings.HasPrefix(l.Reason, "expires") {
		t.Fatalf("expired leaf: %+v", l)
	}
	pool, _ := p.CertPool()
	if _, err := mustCert(t, p.Cert).Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost", CurrentTime: o.now()}); err != nil {
		t.Fatalf("renewed leaf does not verify at its time: %v", err)
	}
}

func TestNamesChangeRegenerates(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}, Names: []string{"localhost"}}
	mustEnsure(t, o)
	o.Names = []string{"LocalHost", "example.test", "10.0.0.1"}
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Created || l.Reason != "SANs lack example.test, 10.0.0.1" {
		t.Fatalf("new names: %+v", l)
	}
	leaf := mustCert(t, PathsFor(dir, P256).Cert)
	if strings.Join(leaf.DNSNames, ",") != "localhost,example.test" || len(leaf.IPAddresses) != 1 || leaf.Subject.CommonName != "localhost" {
		t.Fatalf("SANs %v %v CN %s", leaf.DNSNames, leaf.IPAddresses, leaf.Subject.CommonName)
	}
	o.Names = []string{"example.test"} // a subset is covered
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Reused {
		t.Fatalf("subset of names: %+v", l)
	}
}

func TestWrongKeyRegenerates(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	mustEnsure(t, o)
	p := PathsFor(dir, P256)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherPEM, _ := encodeKey(other)
	if err := os.WriteFile(p.Key, otherPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Created || l.Reason != "key does not match certificate" {
		t.Fatalf("mismatched key: %+v", l)
	}
	key, _, _ := readKey(p.Key)
	if !keyMatches(key, mustCert(t, p.Cert).PublicKey) {
		t.Fatal("key still does not match")
	}
	// An RSA 2048 leaf placed in the p256 directory has the wrong key type.
	copyDir(t, PathsFor(sharedDir, RSA2048).Dir, p.Dir)
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Created || l.Reason != "key is rsa-2048, want ecdsa-p256" {
		t.Fatalf("wrong key type: %+v", l)
	}
}

func TestForeignCARegenerates(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	mustEnsure(t, o)
	p := PathsFor(dir, P256)
	// A leaf from another CA (the shared one) with its own matching key.
	copyDir(t, PathsFor(sharedDir, P256).Dir, p.Dir)
	l := mustEnsure(t, o).Leaves[P256]
	if l.Action != Created || !strings.HasPrefix(l.Reason, "not signed by the CA") {
		t.Fatalf("foreign leaf: %+v", l)
	}
	ca := mustCert(t, CAPathsFor(dir).Cert)
	if err := mustCert(t, p.Cert).CheckSignatureFrom(ca); err != nil {
		t.Fatalf("new leaf not signed by this CA: %v", err)
	}
}

func TestNewCARegeneratesLeaves(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	mustEnsure(t, o)
	oldLeaf := mustRead(t, PathsFor(dir, P256).Cert)
	if err := os.Remove(CAPathsFor(dir).Key); err != nil {
		t.Fatal(err)
	}
	r := mustEnsure(t, o)
	if r.CAAction != Created || r.CAReason != "key missing" {
		t.Fatalf("CA: %s (%s)", r.CAAction, r.CAReason)
	}
	if l := r.Leaves[P256]; l.Action != Created || l.Reason != "the CA was recreated (key missing)" {
		t.Fatalf("leaf under new CA: %+v", l)
	}
	if bytes.Equal(oldLeaf, mustRead(t, PathsFor(dir, P256).Cert)) {
		t.Fatal("leaf unchanged after new CA")
	}
	if !bytes.Equal(mustRead(t, PathsFor(dir, P256).CA), mustRead(t, CAPathsFor(dir).Cert)) {
		t.Fatal("leaf dir still holds the old CA copy")
	}
	// A CA that expires before a new leaf would is replaced too.
	o.now = at(10*365*24*time.Hour - 100*24*time.Hour)
	if r := mustEnsure(t, o); r.CAAction != Created || !strings.Contains(r.CAReason, "before a new leaf would") {
		t.Fatalf("ageing CA: %s (%s)", r.CAAction, r.CAReason)
	}
}

func TestDerivedFilesRepaired(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	mustEnsure(t, o)
	p := PathsFor(dir, P256)
	cert := mustRead(t, p.Cert)
	os.Remove(p.FullChain)
	os.WriteFile(p.CA, []byte("junk"), 0o644)
	os.Chmod(p.Key, 0o644)
	os.Chmod(p.Dir, 0o755)
	l := mustEnsure(t, o).Leaves[P256]
	if l.Action != Repaired || l.Reason != "rewrote ca.pem, fullchain.pem" {
		t.Fatalf("repair: %+v", l)
	}
	if !bytes.Equal(cert, mustRead(t, p.Cert)) {
		t.Fatal("leaf replaced while only derived files were stale")
	}
	for path, mode := range map[string]fs.FileMode{p.Key: 0o600, p.Dir: 0o700} {
		if st, _ := os.Stat(path); st.Mode().Perm() != mode {
			t.Errorf("%s mode %o, want %o", path, st.Mode().Perm(), mode)
		}
	}
}

func TestConcurrentEnsure(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}}
	var wg sync.WaitGroup
	results := make([]*Result, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = EnsureResult(o) })
	}
	wg.Wait()
	created := 0
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		if results[i].Leaves[P256].Action == Created {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("%d of 4 concurrent calls created the leaf, want exactly 1", created)
	}
}

func TestTLSHandshake(t *testing.T) {
	for _, k := range AllKeyTypes() {
		p := PathsFor(sharedDir, k)
		kp, err := p.LoadKeyPair()
		if err != nil {
			t.Fatal(err)
		}
		pool, err := LoadCertPool(p.CA)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range []struct{ network, addr, serverName string }{
			{"tcp4", "127.0.0.1:0", "localhost"},
			{"tcp4", "127.0.0.1:0", "127.0.0.1"},
			{"tcp6", "[::1]:0", "::1"},
		} {
			ln, err := tls.Listen(target.network, target.addr, &tls.Config{Certificates: []tls.Certificate{kp}})
			if err != nil {
				if target.network == "tcp6" {
					continue // no IPv6 loopback here
				}
				t.Fatal(err)
			}
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				c.(*tls.Conn).Handshake()
				c.Write([]byte("ok"))
			}()
			conn, err := tls.Dial(target.network, ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: target.serverName})
			if err != nil {
				ln.Close()
				t.Fatalf("%s handshake as %s: %v", k, target.serverName, err)
			}
			buf := make([]byte, 2)
			conn.SetDeadline(time.Now().Add(5 * time.Second))
			_, err = conn.Read(buf)
			peer := conn.ConnectionState().PeerCertificates
			conn.Close()
			ln.Close()
			if err != nil || string(buf) != "ok" {
				t.Fatalf("%s read after handshake: %v", k, err)
			}
			if len(peer) != 2 || !bytes.Equal(peer[0].Raw, mustCert(t, p.Cert).Raw) {
				t.Fatalf("%s server sent %d certificates, not leaf+CA", k, len(peer))
			}
		}
	}
}

func TestHandshakeRejectedWithoutCA(t *testing.T) {
	kp, err := PathsFor(sharedDir, P256).LoadKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp4", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{kp}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	conn, err := tls.Dial("tcp4", ln.Addr().String(), &tls.Config{RootCAs: x509.NewCertPool(), ServerName: "localhost"})
	if err == nil {
		conn.Close()
		t.Fatal("handshake succeeded with a client that trusts nothing")
	}
}

func TestOptionsErrors(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		o    Options
		want string
	}{
		{Options{}, "no certificate directory"},
		{Options{Dir: dir, Keys: []KeyType{"dsa"}}, `unknown key type "dsa"`},
		{Options{Dir: dir, Names: []string{"a b"}}, `"a b" is not a DNS name`},
		{Options{Dir: dir, Names: []string{"x..y"}}, "empty or over-long label"},
		{Options{Dir: dir, Names: []string{"-x.test"}}, "starts or ends"},
		{Options{Dir: dir, Validity: time.Minute}, "too short"},
		{Options{Dir: dir, Validity: -time.Hour}, "too short"},
	}
	for _, c := range cases {
		if _, err := Ensure(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", c.o, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("rejected options still wrote %d entries", len(ents))
	}
}

func TestShortValidityIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, Keys: []KeyType{P256}, Validity: 2 * time.Hour, Names: []string{"*.lab.test", "[::1]"}}
	mustEnsure(t, o)
	if l := mustEnsure(t, o).Leaves[P256]; l.Action != Reused {
		t.Fatalf("second run with 2h validity: %+v", l)
	}
	leaf := mustCert(t, PathsFor(dir, P256).Cert)
	if leaf.DNSNames[0] != "*.lab.test" || !leaf.IPAddresses[0].Equal([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) {
		t.Fatalf("SANs %v %v", leaf.DNSNames, leaf.IPAddresses)
	}
	if err := leaf.VerifyHostname("a.lab.test"); err != nil {
		t.Fatal(err)
	}
}

// mustRead reads a file or fails the test.
func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
