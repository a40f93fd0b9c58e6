package tls13

import (
	"bufio"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// testPKI is a CA and leaves of several key types for "localhost" and
// 127.0.0.1, made once per test binary.
type testPKI struct {
	roots  *x509.CertPool
	leaves map[string]tls.Certificate
	other  tls.Certificate // a self-signed leaf the roots do not know
}

var pkiOnce = sync.OnceValues(func() (*testPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tls13 test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	p := &testPKI{roots: x509.NewCertPool(), leaves: map[string]tls.Certificate{}}
	p.roots.AddCert(ca)
	keys := map[string]func() (crypto.Signer, error){
		"p256":    func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) },
		"p384":    func() (crypto.Signer, error) { return ecdsa.GenerateKey(elliptic.P384(), rand.Reader) },
		"rsa2048": func() (crypto.Signer, error) { return rsa.GenerateKey(rand.Reader, 2048) },
		"ed25519": func() (crypto.Signer, error) { _, k, err := ed25519.GenerateKey(rand.Reader); return k, err },
	}
	for name, gen := range keys {
		k, err := gen()
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "localhost"},
			DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, k.Public(), caKey)
		if err != nil {
			return nil, err
		}
		p.leaves[name] = tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: k}
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, err
	}
	p.other = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	return p, nil
})

func pki(t testing.TB) *testPKI {
	p, err := pkiOnce()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// serve runs a crypto/tls server on a loopback listener: it echoes each
// line back. It returns the address and a channel with the server's
// handshake error.
func serve(t testing.TB, cfg *tls.Config) (string, chan error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 16)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				tc := tls.Server(c, cfg)
				err := tc.Handshake()
				errc <- err
				if err != nil {
					return
				}
				r := bufio.NewReader(tc)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					tc.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String(), errc
}

// dial runs h's handshake with c over a new connection to addr, blocking,
// and returns the connection and any bytes read past the handshake.
func dial(t testing.TB, addr string, c *Client, h *Handshake) (net.Conn, []byte, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	out, err := h.Start(c, nil)
	if err != nil {
		return conn, nil, err
	}
	if _, err := conn.Write(out); err != nil {
		return conn, nil, err
	}
	buf := make([]byte, 0, 64<<10)
	for {
		if len(buf) == cap(buf) {
			t.Fatal("read buffer full")
		}
		n, err := conn.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n == 0 && err != nil {
			return conn, nil, err
		}
		used, out, done, herr := h.Read(buf, nil)
		if len(out) > 0 {
			if _, err := conn.Write(out); err != nil && herr == nil {
				return conn, nil, err
			}
		}
		buf = buf[:copy(buf, buf[used:])]
		if herr != nil {
			return conn, nil, herr
		}
		if done {
			return conn, buf, nil
		}
	}
}

// echo sends a line under the application keys and reads it back,
// skipping the server's post-handshake messages.
func echo(t testing.TB, conn net.Conn, h *Handshake, rest []byte, line string) {
	t.Helper()
	ck, sk := h.ApplicationKeys()
	var w, r protection
	var err error
	if w.aead, err = NewAEAD(ck.Key, h.Suite().ChaCha); err != nil {
		t.Fatal(err)
	}
	w.iv = ck.IV
	if r.aead, err = NewAEAD(sk.Key, h.Suite().ChaCha); err != nil {
		t.Fatal(err)
	}
	r.iv = sk.IV
	if _, err := conn.Write(w.seal(nil, TypeApplicationData, []byte(line))); err != nil {
		t.Fatal(err)
	}
	buf := append(make([]byte, 0, 64<<10), rest...)
	var got []byte
	for {
		for len(buf) >= RecordHeaderLen {
			n := int(buf[3])<<8 | int(buf[4])
			if len(buf) < RecordHeaderLen+n {
				break
			}
			typ, pt, err := r.open(make([]byte, n), buf[:RecordHeaderLen+n])
			if err != nil {
				t.Fatalf("application record: %v", err)
			}
			if typ == TypeApplicationData {
				got = append(got, pt...)
			}
			buf = buf[:copy(buf, buf[RecordHeaderLen+n:])]
		}
		if string(got) == line {
			return
		}
		n, err := conn.Read(buf[len(buf):cap(buf)])
		if err != nil {
			t.Fatalf("reading the echo: %v (got %q)", err, got)
		}
		buf = buf[:len(buf)+n]
	}
}

func newClient(t testing.TB, cfg *Config) *Client {
	t.Helper()
	if err := cfg.Prepare(); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestHandshakeSuitesGroupsKeys(t *testing.T) {
	p := pki(t)
	for _, key := range []string{"p256", "p384", "rsa2048", "ed25519"} {
		srv := &tls.Config{Certificates: []tls.Certificate{p.leaves[key]}, NextProtos: []string{"http/1.1"}}
		addr, errc := serve(t, srv)
		for _, suite := range DefaultSuites() {
			for _, g := range []Group{X25519, P256} {
				for _, verify := range []bool{false, true} {
					cfg := &Config{ServerName: "localhost", ALPN: []string{"http/1.1"}, Suites: []uint16{suite}, Groups: []Group{g}}
					if verify {
						cfg.Verifier = NewVerifier(p.roots, "localhost", 0)
					}
					c := newClient(t, cfg)
					var h Handshake
					for i := range 2 { // the second reuses the Handshake and the key pair
						conn, rest, err := dial(t, addr, c, &h)
						if err != nil {
							t.Fatalf("%s %s %s verify %v #%d: %v (server: %v)", key, tls.CipherSuiteName(suite), g, verify, i, err, <-errc)
						}
						if serr := <-errc; serr != nil {
							t.Fatalf("server: %v", serr)
						}
						if h.Suite().ID != suite || h.Group() != g || h.ALPN() != "http/1.1" || h.Retried() {
							t.Fatalf("suite %v group %v alpn %q retried %v", h.Suite(), h.Group(), h.ALPN(), h.Retried())
						}
						if verify != (h.PeerKey() != nil) {
							t.Fatalf("verify %v, peer key %T", verify, h.PeerKey())
						}
						echo(t, conn, &h, rest, "hello "+key+"\n")
					}
					if verify && cfg.Verifier.Verified() != 1 {
						t.Fatalf("chain verified %d times for 2 handshakes, want once", cfg.Verifier.Verified())
					}
				}
			}
		}
	}
}

func TestHandshakeRetryRequest(t *testing.T) {
	p := pki(t)
	srv := &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}, CurvePreferences: []tls.CurveID{tls.CurveP256}}
	addr, errc := serve(t, srv)
	for _, fresh := range []bool{false, true} {
		c := newClient(t, &Config{ServerName: "localhost", Groups: []Group{X25519, P256}, FreshKeyShare: fresh,
			Verifier: NewVerifier(p.roots, "localhost", 0)})
		var h Handshake
		for range 2 {
			conn, rest, err := dial(t, addr, c, &h)
			if err != nil {
				t.Fatalf("fresh %v: %v (server: %v)", fresh, err, <-errc)
			}
			<-errc
			if !h.Retried() || h.Group() != P256 {
				t.Fatalf("retried %v group %v, want a HelloRetryRequest to p256", h.Retried(), h.Group())
			}
			echo(t, conn, &h, rest, "after retry\n")
		}
	}
	// A server that supports none of the client's groups.
	c := newClient(t, &Config{ServerName: "localhost", Groups: []Group{X25519}})
	var h Handshake
	_, _, err := dial(t, addr, c, &h)
	var ra RemoteAlert
	if !errors.As(err, &ra) || !strings.Contains(err.Error(), "handshake failure") {
		t.Fatalf("no common group: %v, want a handshake_failure alert", err)
	}
	<-errc
}

func TestHandshakeKeyShareReuse(t *testing.T) {
	p := pki(t)
	addr, errc := serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}})
	for _, fresh := range []bool{false, true} {
		c := newClient(t, &Config{ServerName: "localhost", FreshKeyShare: fresh})
		var h Handshake
		var shares []string
		for range 3 {
			if _, _, err := dial(t, addr, c, &h); err != nil {
				t.Fatal(err)
			}
			<-errc
			shares = append(shares, string(h.key.pub))
		}
		same := shares[0] == shares[1] && shares[1] == shares[2]
		if same == fresh {
			t.Fatalf("fresh %v: key shares of 3 handshakes the same: %v", fresh, same)
		}
	}
}

func TestHandshakeClientCertificateRequested(t *testing.T) {
	p := pki(t)
	addr, errc := serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}, ClientAuth: tls.RequestClientCert})
	c := newClient(t, &Config{ServerName: "localhost"})
	var h Handshake
	conn, rest, err := dial(t, addr, c, &h)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("server: %v", err)
	}
	echo(t, conn, &h, rest, "no client certificate\n")

	// A server that requires one refuses the empty Certificate.
	addr, errc = serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}, ClientAuth: tls.RequireAnyClientCert})
	_, _, err = dial(t, addr, c, &h)
	if err != nil {
		t.Fatal(err) // the client's side completes; the server's alert follows
	}
	if err := <-errc; err == nil {
		t.Fatal("server accepted a handshake without the required client certificate")
	}
}

func TestHandshakeVerificationFailures(t *testing.T) {
	p := pki(t)
	cases := []struct {
		name string
		cert tls.Certificate
		sni  string
		want string
	}{
		{"unknown CA", p.other, "localhost", "certificate signed by unknown authority"},
		{"wrong name", p.leaves["p256"], "example.com", "not example.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr, errc := serve(t, &tls.Config{Certificates: []tls.Certificate{tc.cert}})
			v := NewVerifier(p.roots, tc.sni, 0)
			c := newClient(t, &Config{ServerName: tc.sni, Verifier: v})
			var h Handshake
			for range 2 {
				_, _, err := dial(t, addr, c, &h)
				if err == nil || !strings.HasPrefix(err.Error(), "tls: failed to verify certificate") || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err %v, want a verification error with %q", err, tc.want)
				}
				if serr := <-errc; serr == nil || !strings.Contains(serr.Error(), "bad certificate") {
					t.Fatalf("server saw %v, want the client's bad_certificate alert", serr)
				}
			}
			if v.Verified() != 1 {
				t.Fatalf("a bad chain verified %d times in 2 handshakes, want 1 (cached)", v.Verified())
			}
			// Insecure: the same server works.
			c = newClient(t, &Config{ServerName: tc.sni})
			if _, _, err := dial(t, addr, c, &h); err != nil {
				t.Fatalf("insecure: %v", err)
			}
			<-errc
		})
	}
}

func TestHandshakeIPServerName(t *testing.T) {
	p := pki(t)
	var sni string
	var mu sync.Mutex
	addr, errc := serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]},
		GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
			mu.Lock()
			sni = hi.ServerName
			mu.Unlock()
			return nil, nil
		}})
	c := newClient(t, &Config{ServerName: "127.0.0.1", Verifier: NewVerifier(p.roots, "127.0.0.1", 0)})
	var h Handshake
	if _, _, err := dial(t, addr, c, &h); err != nil {
		t.Fatal(err)
	}
	<-errc
	mu.Lock()
	defer mu.Unlock()
	if sni != "" {
		t.Fatalf("SNI %q sent for an IP address", sni)
	}
}

// A server that closes the connection mid-handshake: the handshake sees EOF
// from its caller; one that sends garbage gets a decode error, not a panic.
func TestHandshakeGarbage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.ReadFull(c, make([]byte, 5))
			c.Write([]byte{22, 3, 3, 0, 6, 2, 0, 0, 2, 3, 3})
			time.Sleep(50 * time.Millisecond)
			c.Close()
		}
	}()
	c := newClient(t, &Config{ServerName: "localhost"})
	var h Handshake
	_, _, err = dial(t, ln.Addr().String(), c, &h)
	var e *Error
	if !errors.As(err, &e) || e.Alert != alertDecodeError || !strings.Contains(err.Error(), "malformed ServerHello") {
		t.Fatalf("err %v, want a malformed ServerHello error", err)
	}
}
