package gen

import (
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen/tls13"
)

// The lean TLS 1.3 implementation makes no allocation of its own per handshake:
// dial, handshake, request, response and close, in steady state, allocate
// exactly what the standard library's constructors do for the AEADs of the
// handshake's four traffic keys (the standard library cannot re-key an
// AEAD), plus, with --ca, the CertificateVerify signature check, and with
// P-256, crypto/ecdh's exchange. Those are measured here on their own, in
// the same process, so a change in them moves both sides.
//
// The server is a child process (see alloc_test.go): testing.AllocsPerRun
// counts the whole process.

var (
	sinkAEAD cipher.AEAD
	sinkOK   bool
	sinkKey  []byte
)

// aeadAllocs is what four NewAEAD calls allocate.
func aeadAllocs(chacha bool) float64 {
	key := make([]byte, 32)
	if !chacha {
		key = key[:16]
	}
	return testing.AllocsPerRun(100, func() {
		for range 4 {
			sinkAEAD, _ = tls13.NewAEAD(key, chacha)
		}
	})
}

// ecdsaVerifyAllocs is what one P-256 ECDSA signature check allocates.
func ecdsaVerifyAllocs(t *testing.T) float64 {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte("x"))
	sig, err := ecdsa.SignASN1(rand.Reader, k, d[:])
	if err != nil {
		t.Fatal(err)
	}
	pub := &k.PublicKey
	return testing.AllocsPerRun(100, func() { sinkOK = ecdsa.VerifyASN1(pub, d[:], sig) })
}

// p256ExchangeAllocs is what one crypto/ecdh P-256 shared secret allocates.
func p256ExchangeAllocs(t *testing.T) float64 {
	a, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	peer := a.PublicKey().Bytes()
	return testing.AllocsPerRun(100, func() {
		p, _ := ecdh.P256().NewPublicKey(peer)
		sinkKey, _ = a.ECDH(p)
	})
}

func TestLeanHandshakeAllocs(t *testing.T) {
	dir := testutil.CertDir(t)
	addr := startAllocServer(t, "tls", 1024, dir)
	aes, chacha := aeadAllocs(false), aeadAllocs(true)
	verify, p256 := ecdsaVerifyAllocs(t), p256ExchangeAllocs(t)
	ca := certs.PathsFor(dir, certs.P256).CA
	cases := []struct {
		name string
		opts TLSOptions
		want float64
	}{
		{"insecure", TLSOptions{Insecure: true}, aes},
		{"insecure fresh-key-share", TLSOptions{Insecure: true, FreshKeyShare: true}, aes},
		{"insecure chacha20", TLSOptions{Insecure: true, Ciphers: []string{"chacha20"}}, chacha},
		{"ca", TLSOptions{CAFile: ca}, aes + verify},
		{"insecure p256", TLSOptions{Insecure: true, Curves: []string{"p256"}}, aes + p256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{URL: "https://" + addr + "/", Connections: 1, NewConn: true, TLS: tc.opts}
			got := allocsPerRequest(t, cfg)
			if got != tc.want {
				t.Fatalf("%v allocations per handshake, want %v (the standard library's AEADs and signature check; none of loadlab's own)", got, tc.want)
			}
		})
	}
}
