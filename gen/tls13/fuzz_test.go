package tls13

import (
	"crypto"
	"crypto/ecdh"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/cloudflare/circl/dh/x25519"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/tlsservers"
)

// Fuzz targets for the parsers of the server's handshake messages and for
// the whole handshake. The seed corpus (testdata/fuzz) was captured from
// real servers by TestCaptureSeeds: Go's crypto/tls, nginx, HAProxy and h2o
// (OpenSSL 3.0) and Caddy, with ECDSA P-256, RSA 2048 and Ed25519
// certificates, and a HelloRetryRequest from a P-256-only server.
//
// Regenerate it with
//
//	LOADLAB_CAPTURE_SEEDS=1 go test ./gen/tls13 -run TestCaptureSeeds

func FuzzServerHello(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		sh, err := parseServerHello(body)
		if err != nil {
			return
		}
		if len(sh.sessionID) > 32 || (sh.share != nil && sh.hrr) || (sh.cookie != nil && !sh.hrr) {
			t.Fatalf("inconsistent ServerHello %+v", sh)
		}
	})
}

func FuzzEncryptedExtensions(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		ee, err := parseEncryptedExtensions(body)
		if err == nil && ee.alpn != nil && len(ee.alpn) == 0 {
			t.Fatal("empty ALPN protocol accepted")
		}
	})
}

func FuzzCertificate(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		_, chain, err := parseCertificate(body, nil)
		if err != nil {
			return
		}
		if len(chain) == 0 || len(chain) > maxChain {
			t.Fatalf("%d certificates accepted", len(chain))
		}
		for _, der := range chain {
			if len(der) == 0 {
				t.Fatal("empty certificate accepted")
			}
		}
		// The Verifier's slow path must not panic on whatever parsed.
		v := NewVerifier(nil, "localhost", 1)
		var key [32]byte
		v.check(&key, chain)
	})
}

func FuzzCertificateVerify(f *testing.F) {
	sv := newSigVerifier()
	pki, err := pkiOnce()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		scheme, sig, err := parseCertificateVerify(body)
		if err != nil {
			return
		}
		if len(sig) == 0 {
			t.Fatal("empty signature accepted")
		}
		// Checking any signature with any key type must not panic (and
		// must fail: the transcript hash is made up).
		for _, name := range []string{"p256", "rsa2048", "ed25519"} {
			pub := pki.leaves[name].PrivateKey.(crypto.Signer).Public()
			if sv.check(pub, scheme, sig, make([]byte, 32)) == nil {
				t.Fatalf("a made-up CertificateVerify verified with the %s key", name)
			}
		}
	})
}

func FuzzFinished(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, n := range []int{32, 48} {
			if v, err := parseFinished(body, n); err == nil && len(v) != n {
				t.Fatalf("verify_data of %d bytes accepted for a %d-byte hash", len(v), n)
			}
		}
	})
}

// FuzzHandshake feeds a server's byte stream to a handshake whose random,
// session id and key shares are fixed, in pieces of every size the input
// allows: the seeds are real servers' answers to that exact ClientHello,
// so they complete (TestReplaySeeds), and mutations reach every state.
func FuzzHandshake(f *testing.F) {
	f.Fuzz(func(t *testing.T, flight []byte) {
		for _, groups := range [][]Group{{X25519}, {X25519, P256}} {
			c := replayClient(t, groups)
			var h Handshake
			if _, err := h.Start(c, nil); err != nil {
				t.Fatal(err)
			}
			step := 1 + len(flight)%7
			var buf []byte
			for i := 0; i < len(flight); i += step {
				buf = append(buf, flight[i:min(i+step, len(flight))]...)
				used, _, done, err := h.Read(buf, nil)
				if used > len(buf) {
					t.Fatalf("used %d of %d", used, len(buf))
				}
				buf = buf[used:]
				if err != nil || done {
					break
				}
			}
		}
	})
}

// fixedReader returns the same bytes every time: a deterministic random.
type fixedReader struct{}

func (fixedReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return len(b), nil
}

// replayClient is an insecure Client with a fixed random and fixed key
// pairs, so that a recorded server answer replays.
func replayClient(t testing.TB, groups []Group) *Client {
	cfg := &Config{ServerName: "localhost", ALPN: []string{"http/1.1"}, Groups: groups}
	if err := cfg.Prepare(); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.rand = fixedReader{}
	var scalar [32]byte
	fixedReader{}.Read(scalar[:])
	k := &c.keys[0]
	k.group, k.xPriv = X25519, x25519.Key(scalar)
	x25519.KeyGen(&k.xPub, &k.xPriv)
	k.pub = k.xPub[:]
	c.have[0] = true
	scalar[0] = 1 // a valid P-256 scalar
	p, err := ecdh.P256().NewPrivateKey(scalar[:])
	if err != nil {
		t.Fatal(err)
	}
	c.keys[1] = keyPair{group: P256, p256: p, pub: p.PublicKey().Bytes()}
	c.have[1] = true
	copy(c.hello[cfg.offShare:], k.pub)
	return c
}

// Every replay seed is a complete, real handshake.
func TestReplaySeeds(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/FuzzHandshake/*")
	if len(files) == 0 {
		t.Fatal("no FuzzHandshake seeds")
	}
	for _, file := range files {
		flight := readSeed(t, file)
		groups := []Group{X25519}
		if strings.Contains(file, "retry") {
			groups = []Group{X25519, P256}
		}
		c := replayClient(t, groups)
		var h Handshake
		h.Start(c, nil)
		used, _, done, err := h.Read(flight, nil)
		if err != nil || !done {
			t.Errorf("%s: done %v err %v after %d of %d bytes", filepath.Base(file), done, err, used, len(flight))
		}
	}
}

func readSeed(t testing.TB, file string) []byte {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(b), "\n", 3)
	if len(lines) < 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
		t.Fatalf("%s: not a fuzz seed", file)
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return []byte(s)
}

func writeSeed(t testing.TB, target, name string, data []byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureSeeds records real servers' handshakes as fuzz seeds (only
// with LOADLAB_CAPTURE_SEEDS=1): each server message as a seed of its
// parser, and the whole byte stream the server sent as a FuzzHandshake
// seed.
func TestCaptureSeeds(t *testing.T) {
	if os.Getenv("LOADLAB_CAPTURE_SEEDS") == "" {
		t.Skip("set LOADLAB_CAPTURE_SEEDS=1 to capture fuzz seeds from real servers")
	}
	type target struct {
		name   string
		addr   string
		groups []Group
	}
	var targets []target
	p := pki(t)
	for _, key := range []string{"p256", "rsa2048", "ed25519"} {
		addr, _ := serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves[key]}, NextProtos: []string{"http/1.1"}})
		targets = append(targets, target{"go-" + key, addr, []Group{X25519}})
	}
	addr, _ := serve(t, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}, CurvePreferences: []tls.CurveID{tls.CurveP256}})
	targets = append(targets, target{"go-p256-retry", addr, []Group{X25519, P256}})
	dir := testutil.CertDir(t)
	for _, kind := range tlsservers.All {
		if tlsservers.Binary(kind) == "" {
			t.Logf("%s not installed: no seeds from it", kind)
			continue
		}
		for _, key := range []certs.KeyType{certs.P256, certs.RSA2048} {
			s := tlsservers.Start(t, kind, tlsservers.Options{Cert: certs.PathsFor(dir, key)})
			targets = append(targets, target{string(kind) + "-" + string(key), s.Addr, []Group{X25519}})
		}
		if tlsservers.CanP256Only(kind) {
			s := tlsservers.Start(t, kind, tlsservers.Options{Cert: certs.PathsFor(dir, certs.P256), P256Only: true})
			targets = append(targets, target{string(kind) + "-p256-retry", s.Addr, []Group{X25519, P256}})
		}
	}
	names := map[byte]string{typeServerHello: "FuzzServerHello", typeEncryptedExtensions: "FuzzEncryptedExtensions",
		typeCertificate: "FuzzCertificate", typeCertificateVerify: "FuzzCertificateVerify", typeFinished: "FuzzFinished"}
	for _, tg := range targets {
		c := replayClient(t, tg.groups)
		seen := map[string]int{}
		c.Trace = func(msg []byte) {
			target, ok := names[msg[0]]
			if !ok {
				return
			}
			n := seen[target]
			seen[target]++
			suffix := ""
			if n > 0 {
				suffix = fmt.Sprint("-", n+1)
			}
			writeSeed(t, target, tg.name+suffix, msg[4:])
		}
		conn, err := net.Dial("tcp", tg.addr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		var h Handshake
		out, _ := h.Start(c, nil)
		conn.Write(out)
		var stream, buf []byte
		rb := make([]byte, 64<<10)
		for !h.Done() {
			n, err := conn.Read(rb)
			if n == 0 {
				t.Fatalf("%s: %v", tg.name, err)
			}
			stream = append(stream, rb[:n]...)
			buf = append(buf, rb[:n]...)
			used, out, _, herr := h.Read(buf, nil)
			conn.Write(out)
			buf = buf[used:]
			if herr != nil {
				t.Fatalf("%s: %v", tg.name, herr)
			}
		}
		conn.Close()
		writeSeed(t, "FuzzHandshake", tg.name, stream[:len(stream)-len(buf)])
		keys := make([]string, 0, len(seen))
		for k := range seen {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Logf("%s: %d bytes, %v", tg.name, len(stream)-len(buf), keys)
	}
}
