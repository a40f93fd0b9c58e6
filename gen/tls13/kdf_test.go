package tls13

import (
	"bytes"
	"crypto"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"testing"
)

// The kdf against crypto/hmac and crypto/hkdf, for both hashes, keys
// shorter and longer than a block, and outputs longer than one hash.
func TestKDFMatchesStandardLibrary(t *testing.T) {
	for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA384} {
		k := newKDF(h)
		for _, keyLen := range []int{0, 16, h.Size(), 64, 129, 200} {
			key := make([]byte, keyLen)
			rand.Read(key)
			data := make([]byte, 77)
			rand.Read(data)
			m := hmac.New(h.New, key)
			m.Write(data)
			if got, want := k.hmac(nil, key, data[:10], data[10:50], data[50:]), m.Sum(nil); !bytes.Equal(got, want) {
				t.Fatalf("%v key %d: hmac %x, want %x", h, keyLen, got, want)
			}
			prk, _ := hkdf.Extract(h.New, data, key)
			if got := k.extract(nil, key, data); !bytes.Equal(got, prk) {
				t.Fatalf("%v: extract %x, want %x", h, got, prk)
			}
			for _, n := range []int{12, 16, h.Size(), 2*h.Size() + 5} {
				want, _ := hkdf.Expand(h.New, prk, string(data), n)
				if got := k.expand(nil, prk, data, n); !bytes.Equal(got, want) {
					t.Fatalf("%v: expand %d: %x, want %x", h, n, got, want)
				}
			}
		}
		// Expand-Label's info: length, "tls13 " label, context.
		secret := make([]byte, h.Size())
		rand.Read(secret)
		ctx := []byte("context")
		info := append([]byte{0, 12, byte(len("tls13 iv"))}, "tls13 iv"...)
		info = append(info, byte(len(ctx)))
		info = append(info, ctx...)
		want, _ := hkdf.Expand(h.New, secret, string(info), 12)
		if got := ExpandLabel(h, secret, "iv", ctx, 12); !bytes.Equal(got, want) {
			t.Fatalf("%v: ExpandLabel %x, want %x", h, got, want)
		}
	}
}

// RFC 8448 §3 (simple 1-RTT handshake): the early secret, and the client
// handshake traffic secret from the published ECDHE shared secret and
// transcript hash.
func TestKeyScheduleRFC8448(t *testing.T) {
	k := newKDF(crypto.SHA256)
	hx := func(s string) []byte {
		b := make([]byte, len(s)/2)
		for i := range b {
			var v byte
			for _, c := range s[2*i : 2*i+2] {
				v <<= 4
				switch {
				case c >= '0' && c <= '9':
					v |= byte(c - '0')
				default:
					v |= byte(c-'a') + 10
				}
			}
			b[i] = v
		}
		return b
	}
	early := hx("33ad0a1c607ec03b09e6cd9893680ce210adf300aa1f2660e1b22e10f170f92a")
	if !bytes.Equal(k.early[:32], early) {
		t.Fatalf("early secret %x, want %x", k.early[:32], early)
	}
	derived := hx("6f2615a108c702c5678f54fc9dbab69716c076189c48250cebeac3576c3611ba")
	if !bytes.Equal(k.derivedEarly[:32], derived) {
		t.Fatalf("derived %x, want %x", k.derivedEarly[:32], derived)
	}
	shared := hx("8bd4054fb55b9d63fdfbacf9f04b9f0d35e6d63f537563efd46272900f89492d")
	hs := k.extract(nil, k.derivedEarly[:32], shared)
	if want := hx("1dc826e93606aa6fdc0aadc12f741b01046aa6b99f691ed221a9f0ca043fbeac"); !bytes.Equal(hs, want) {
		t.Fatalf("handshake secret %x, want %x", hs, want)
	}
	th := hx("860c06edc07858ee8e78f0e7428c58edd6b43f2ca3e6e95f02ed063cf0e1cad8")
	if got, want := k.deriveSecret(nil, hs, "c hs traffic", th), hx("b3eddb126e067f35a780b3abf45e2d8f3b1a950738f52e9600746a0e27a55a21"); !bytes.Equal(got, want) {
		t.Fatalf("c hs traffic %x, want %x", got, want)
	}
}
