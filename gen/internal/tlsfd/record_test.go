package tlsfd

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/loadlab/loadlab/gen/tls13"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 8448 §3 (Simple 1-RTT Handshake): the server handshake traffic secret
// and the key and IV derived from it.
func TestExpandLabelRFC8448(t *testing.T) {
	secret := unhex(t, "b6 7b 7d 69 0c c1 6c 4e 75 e5 42 13 cb 2d 37 b4 e9 c9 12 bc de d9 10 5d 42 be fd 59 d3 91 ad 38")
	if got, want := tls13.ExpandLabel(crypto.SHA256, secret, "key", nil, 16), unhex(t, "3f ce 51 60 09 c2 17 27 d0 f2 e4 e8 6e e4 03 bc"); !bytes.Equal(got, want) {
		t.Errorf("key = %x, want %x", got, want)
	}
	if got, want := tls13.ExpandLabel(crypto.SHA256, secret, "iv", nil, 12), unhex(t, "5d 31 3e b2 67 12 76 ee 13 00 0b 30"); !bytes.Equal(got, want) {
		t.Errorf("iv = %x, want %x", got, want)
	}
}

// The TLS 1.2 PRF (P_SHA256) test vector from the IETF TLS WG list
// (mail-archive/web/tls/current/msg03416).
func TestPRF12Vector(t *testing.T) {
	got := prf12(crypto.SHA256, unhex(t, "9bbe436ba940f017b17652849a71db35"), "test label", unhex(t, "a0ba9f936cda311827a6f796ffd5198c"), 100)
	want := unhex(t, `e3f229ba727be17b8d122620557cd453c2aab21d07c3d495329b52d4e61edb5a
		6b301791e90d35c9c9a46b4e14baf9af0fa022f7077def17abfd3797c0564bab
		4fbc91666e9def9b97fce34f796789baa48082d122ee42c5a72e5a5110fff701 87347b66`)
	if !bytes.Equal(got, want) {
		t.Fatalf("prf12 = %x\nwant %x", got, want)
	}
}

// rfc8448Layer builds a TLS 1.3 AES-128-GCM record layer whose both
// directions use key and iv at sequence seq.
func rfc8448Layer(t *testing.T, key, iv string, seq uint64) *recordLayer {
	spec, _ := cipherSpecFor(tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
	r := &recordLayer{vers: tls.VersionTLS13, spec: spec, maxBody: maxBodyTLS13}
	for _, d := range []*direction{&r.in, &r.out} {
		aead, err := newAEAD(unhex(t, key), false)
		if err != nil {
			t.Fatal(err)
		}
		d.aead = aead
		copy(d.iv[:], unhex(t, iv))
		d.seq = seq
	}
	return r
}

// RFC 8448 §3: the application data records both sides send, the server's
// at sequence 1 (its first record was a NewSessionTicket). Opening must give
// the plaintext 00..31, sealing must give the exact wire bytes.
func TestRecordRFC8448(t *testing.T) {
	payload := make([]byte, 50)
	for i := range payload {
		payload[i] = byte(i)
	}
	cases := []struct {
		name, key, iv, record string
		seq                   uint64
	}{
		{"client", "17 42 2d da 59 6e d5 d9 ac d8 90 e3 c6 3f 50 51", "5b 78 92 3d ee 08 57 90 33 e5 23 d9", `
			17 03 03 00 43 a2 3f 70 54 b6 2c 94 d0 af fa fe 82 28 ba 55 cb ef ac ea
			42 f9 14 aa 66 bc ab 3f 2b 98 19 a8 a5 b4 6b 39 5b d5 4a 9a 20 44 1e 2b
			62 97 4e 1f 5a 62 92 a2 97 70 14 bd 1e 3d ea e6 3a ee bb 21 69 49 15 e4`, 0},
		{"server", "9f 02 28 3b 6c 9c 07 ef c2 6b b9 f2 ac 92 e3 56", "cf 78 2b 88 dd 83 54 9a ad f1 e9 84", `
			17 03 03 00 43 2e 93 7e 11 ef 4a c7 40 e5 38 ad 36 00 5f c4 a4 69 32 fc
			32 25 d0 5f 82 aa 1b 36 e3 0e fa f9 7d 90 e6 df fc 60 2d cb 50 1a 59 a8
			fc c4 9c 4b f2 e5 f0 a2 1c 00 47 c2 ab f3 32 54 0d d0 32 e1 67 c2 95 5d`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			record := unhex(t, c.record)
			r := rfc8448Layer(t, c.key, c.iv, c.seq)
			buf := append([]byte(nil), record...)
			n, used, err := openBack(r, buf)
			if err != nil || used != len(record) || !bytes.Equal(buf[:n], payload) {
				t.Fatalf("open: n %d used %d err %v data %x", n, used, err, buf[:n])
			}
			if r.in.seq != c.seq+1 {
				t.Errorf("read seq %d, want %d", r.in.seq, c.seq+1)
			}
			if got := r.seal(nil, typeApplicationData, payload); !bytes.Equal(got, record) {
				t.Errorf("seal = %x\nwant %x", got, record)
			}
			// The same record at another sequence number does not open.
			r = rfc8448Layer(t, c.key, c.iv, c.seq+1)
			if _, _, err := openBack(r, append([]byte(nil), record...)); err != errBadRecordMAC {
				t.Errorf("open at the wrong sequence: %v, want errBadRecordMAC", err)
			}
		})
	}
}

// openBack opens src into a separate buffer and copies the plaintext back
// to the front of src, so tests can look at src[:n].
func openBack(r *recordLayer, src []byte) (int, int, error) {
	dst := make([]byte, len(src))
	n, used, err := r.open(dst, src)
	copy(src, dst[:n])
	return n, used, err
}

// layerPair returns a client and a server record layer with random secrets
// for suite in version vers.
func layerPair(t testing.TB, vers, suite uint16) (client, server *recordLayer) {
	var err1, err2 error
	if vers == tls.VersionTLS13 {
		spec, _ := cipherSpecFor(vers, suite)
		cs, ss := make([]byte, spec.hash.Size()), make([]byte, spec.hash.Size())
		rand.Read(cs)
		rand.Read(ss)
		client, err1 = newRecordLayer13(suite, ss, cs)
		server, err2 = newRecordLayer13(suite, cs, ss)
	} else {
		master, cr, sr := make([]byte, 48), make([]byte, 32), make([]byte, 32)
		rand.Read(master)
		rand.Read(cr)
		rand.Read(sr)
		client, err1 = newRecordLayer12(suite, master, cr, sr, true)
		server, err2 = newRecordLayer12(suite, master, cr, sr, false)
	}
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return client, server
}

var allRecordSuites = []struct {
	vers, suite uint16
}{
	{tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256},
	{tls.VersionTLS13, tls.TLS_AES_256_GCM_SHA384},
	{tls.VersionTLS13, tls.TLS_CHACHA20_POLY1305_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
}

func suiteName(vers, suite uint16) string {
	return tls.VersionName(vers) + "/" + tls.CipherSuiteName(suite)
}

// Records sealed by one side open on the other, in every suite, including
// several records per buffer, a record cut short, and records of every size
// up to the limit; sealing and opening do not allocate.
func TestRecordRoundTrip(t *testing.T) {
	for _, s := range allRecordSuites {
		t.Run(suiteName(s.vers, s.suite), func(t *testing.T) {
			client, server := layerPair(t, s.vers, s.suite)
			msg := make([]byte, 40000) // three records
			rand.Read(msg)
			wire := server.seal(nil, typeApplicationData, msg)
			wire = server.seal(wire, typeApplicationData, msg[:1])
			n, used, err := openBack(client, wire[:len(wire)-1])
			if err != nil || n != 40000 || !bytes.Equal(wire[:n], msg) {
				t.Fatalf("open: n %d err %v", n, err)
			}
			tail := append([]byte(nil), wire[used:len(wire)-1]...)
			tail = append(tail, wire[len(wire)-1])
			if n, used, err := openBack(client, tail); err != nil || n != 1 || used != len(tail) || tail[0] != msg[0] {
				t.Fatalf("open the completed tail: n %d used %d err %v", n, used, err)
			}
			// The other direction.
			wire = client.seal(wire[:0], typeApplicationData, msg[:maxPlaintext])
			if n, _, err := openBack(server, wire); err != nil || n != maxPlaintext || !bytes.Equal(wire[:n], msg[:maxPlaintext]) {
				t.Fatalf("server open: n %d err %v", n, err)
			}
			buf, out := make([]byte, 0, maxRecordLen), make([]byte, maxRecordLen)
			allocs := testing.AllocsPerRun(100, func() {
				buf = server.seal(buf[:0], typeApplicationData, msg[:1024])
				if n, _, err := client.open(out, buf); n != 1024 || err != nil {
					t.Fatalf("open: %d %v", n, err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per seal+open, want 0", allocs)
			}
		})
	}
}

// A flipped bit anywhere in a record fails authentication.
func TestRecordBadMAC(t *testing.T) {
	for _, s := range allRecordSuites {
		client, server := layerPair(t, s.vers, s.suite)
		wire := server.seal(nil, typeApplicationData, []byte("hello"))
		wire[len(wire)-3] ^= 1
		if _, _, err := openBack(client, wire); err != errBadRecordMAC {
			t.Errorf("%s: %v, want errBadRecordMAC", suiteName(s.vers, s.suite), err)
		}
	}
}

func TestRecordAlerts(t *testing.T) {
	for _, s := range allRecordSuites {
		name := suiteName(s.vers, s.suite)
		client, server := layerPair(t, s.vers, s.suite)
		wire := server.seal(nil, typeApplicationData, []byte("data"))
		wire = server.seal(wire, typeAlert, []byte{1, alertCloseNotify})
		wire = server.seal(wire, typeApplicationData, []byte("ignored"))
		if n, _, err := openBack(client, wire); err != io.EOF || string(wire[:n]) != "data" {
			t.Errorf("%s: close_notify: %q %v, want data and EOF", name, wire[:n], err)
		}
		client, server = layerPair(t, s.vers, s.suite)
		wire = server.seal(nil, typeAlert, []byte{2, 40})
		_, _, err := openBack(client, wire)
		var ae tls.AlertError
		if !errors.As(err, &ae) || ae != 40 || err.Error() != "remote error: tls: handshake failure" {
			t.Errorf("%s: fatal alert: %v", name, err)
		}
	}
}

func TestRecordOversized(t *testing.T) {
	client, _ := layerPair(t, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
	n := maxBodyTLS13 + 1
	wire := []byte{23, 3, 3, byte(n >> 8), byte(n)}
	if _, _, err := openBack(client, wire); err != errRecordOverflow {
		t.Fatalf("%v, want errRecordOverflow", err)
	}
}

// Post-handshake messages: tickets are skipped even across records; a
// KeyUpdate switches keys, and answers when asked; misplaced or unknown
// messages are errors; TLS 1.2 renegotiation is refused.
func TestRecordHandshakeMessages(t *testing.T) {
	for _, suite := range []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256} {
		t.Run(tls.CipherSuiteName(suite), func(t *testing.T) {
			client, server := layerPair(t, tls.VersionTLS13, suite)
			ticket := append([]byte{hsNewSessionTicket, 0, 0, 200}, make([]byte, 200)...)
			wire := server.seal(nil, typeHandshake, ticket[:2])
			wire = server.seal(wire, typeHandshake, append(ticket[2:], ticket...)) // the rest, and a second ticket
			wire = server.seal(wire, typeApplicationData, []byte("a"))
			if err := server.sendKeyUpdate(true); err != nil {
				t.Fatal(err)
			}
			wire = append(wire, server.reply...)
			server.reply = nil
			wire = server.seal(wire, typeApplicationData, []byte("b"))
			n, used, err := openBack(client, wire)
			if err != nil || used != len(wire) || string(wire[:n]) != "ab" || client.tickets != 2 {
				t.Fatalf("open: %q used %d/%d err %v tickets %d", wire[:n], used, len(wire), err, client.tickets)
			}
			if len(client.reply) == 0 {
				t.Fatal("no KeyUpdate answer")
			}
			// The server reads the answer, switches its read keys, and reads
			// what the client sends next.
			wire = append(client.reply, client.seal(nil, typeApplicationData, []byte("c"))...)
			client.reply = nil
			if n, _, err := openBack(server, wire); err != nil || string(wire[:n]) != "c" || len(server.reply) != 0 {
				t.Fatalf("server open: %q %v reply %d", wire[:n], err, len(server.reply))
			}
			// Not requested: no answer.
			server.sendKeyUpdate(false)
			wire = append(server.reply, server.seal(nil, typeApplicationData, []byte("d"))...)
			server.reply = nil
			if n, _, err := openBack(client, wire); err != nil || string(wire[:n]) != "d" || len(client.reply) != 0 {
				t.Fatalf("unrequested KeyUpdate: %q %v reply %d", wire[:n], err, len(client.reply))
			}
		})
	}
	bad := []struct {
		name string
		msg  []byte
		want error
	}{
		{"KeyUpdate not last in its record", []byte{hsKeyUpdate, 0, 0, 1, 0, 0}, errBadKeyUpdate},
		{"KeyUpdate of two bytes", []byte{hsKeyUpdate, 0, 0, 2, 0, 0}, errBadKeyUpdate},
		{"CertificateRequest", []byte{13, 0, 0, 1, 0}, errUnexpectedMsg},
	}
	for _, b := range bad {
		client, server := layerPair(t, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
		if _, _, err := openBack(client, server.seal(nil, typeHandshake, b.msg)); err != b.want {
			t.Errorf("%s: %v, want %v", b.name, err, b.want)
		}
	}
	// A handshake message cut short by application data.
	client, server := layerPair(t, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
	wire := server.seal(nil, typeHandshake, []byte{hsNewSessionTicket, 0, 0, 10, 1})
	wire = server.seal(wire, typeApplicationData, []byte("x"))
	if _, _, err := openBack(client, wire); err != errUnexpectedMsg {
		t.Errorf("interrupted message: %v, want errUnexpectedMsg", err)
	}
	client, server = layerPair(t, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
	if _, _, err := openBack(client, server.seal(nil, typeHandshake, []byte{hsHelloRequest, 0, 0, 0})); err != errRenegotiation {
		t.Errorf("HelloRequest: %v, want errRenegotiation", err)
	}
}

// A TLS 1.3 record whose plaintext is all padding has no content type.
func TestRecordPadding(t *testing.T) {
	client, server := layerPair(t, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
	// Seal "hi" + type + 3 zero bytes of padding by hand: seal the inner
	// plaintext as if it were a type-0 record with a payload that ends in
	// the real type.
	wire := server.seal(nil, 0, []byte{'h', 'i', typeApplicationData, 0, 0})
	if n, _, err := openBack(client, wire); err != nil || string(wire[:n]) != "hi" {
		t.Fatalf("padded record: %q %v", wire[:n], err)
	}
	wire = server.seal(nil, 0, []byte{0, 0})
	if _, _, err := openBack(client, wire); err != errNoContentType {
		t.Fatalf("all padding: %v, want errNoContentType", err)
	}
}
