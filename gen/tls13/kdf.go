package tls13

import (
	"crypto"
	"hash"
)

// kdf computes HMAC, HKDF (RFC 5869) and HKDF-Expand-Label (RFC 8446 §7.1)
// with one hash function. It allocates only when created: its hash states
// and scratch buffers are reused. Not safe for concurrent use.
type kdf struct {
	h           crypto.Hash
	in, out     hash.Hash
	size, block int

	ipad, opad [128]byte
	hkey       [64]byte // a key longer than a block, hashed
	inner      [64]byte
	t          [64]byte
	ctr        [1]byte
	info       [2 + 1 + 255 + 1 + 255]byte

	early        [64]byte // HKDF-Extract(0, 0): the early secret without a PSK
	derivedEarly [64]byte // Derive-Secret(early, "derived", "")
	emptyHash    [64]byte // Hash("")
	zeros        [64]byte
}

// newKDF returns a kdf for h with the constants of the key schedule.
func newKDF(h crypto.Hash) *kdf {
	k := newBareKDF(h)
	k.in.Sum(k.emptyHash[:0])
	k.extract(k.early[:0], nil, k.zeros[:k.size])
	k.deriveSecret(k.derivedEarly[:0], k.early[:k.size], "derived", k.emptyHash[:k.size])
	return k
}

// newBareKDF returns a kdf for h without the key schedule's constants.
func newBareKDF(h crypto.Hash) *kdf {
	k := &kdf{h: h, in: h.New(), out: h.New(), size: h.Size()}
	k.block = k.in.BlockSize()
	return k
}

// hmac appends HMAC(key, a || b || c) to dst (RFC 2104).
func (k *kdf) hmac(dst, key, a, b, c []byte) []byte {
	if len(key) > k.block {
		k.in.Reset()
		k.in.Write(key)
		key = k.in.Sum(k.hkey[:0])
	}
	for i := 0; i < k.block; i++ {
		var x byte
		if i < len(key) {
			x = key[i]
		}
		k.ipad[i] = x ^ 0x36
		k.opad[i] = x ^ 0x5c
	}
	k.in.Reset()
	k.in.Write(k.ipad[:k.block])
	k.in.Write(a)
	k.in.Write(b)
	k.in.Write(c)
	inner := k.in.Sum(k.inner[:0])
	k.out.Reset()
	k.out.Write(k.opad[:k.block])
	k.out.Write(inner)
	return k.out.Sum(dst)
}

// extract appends HKDF-Extract(salt, ikm) to dst. A nil salt is a string of
// zeros, as RFC 5869 says (HMAC pads short keys with zeros anyway).
func (k *kdf) extract(dst, salt, ikm []byte) []byte {
	return k.hmac(dst, salt, ikm, nil, nil)
}

// expand appends n bytes of HKDF-Expand(prk, info) to dst.
func (k *kdf) expand(dst, prk, info []byte, n int) []byte {
	var prev []byte
	for i := 1; n > 0; i++ {
		k.ctr[0] = byte(i)
		prev = k.hmac(k.t[:0], prk, prev, info, k.ctr[:])
		m := min(n, len(prev))
		dst = append(dst, prev[:m]...)
		n -= m
	}
	return dst
}

// expandLabel appends HKDF-Expand-Label(secret, label, context, n) to dst.
func (k *kdf) expandLabel(dst, secret []byte, label string, context []byte, n int) []byte {
	info := append(k.info[:0], byte(n>>8), byte(n), byte(len("tls13 ")+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	return k.expand(dst, secret, info, n)
}

// deriveSecret appends Derive-Secret(secret, label, transcript) to dst;
// transcriptHash is the transcript's hash, already computed.
func (k *kdf) deriveSecret(dst, secret []byte, label string, transcriptHash []byte) []byte {
	return k.expandLabel(dst, secret, label, transcriptHash, k.size)
}

// ExpandLabel returns HKDF-Expand-Label(secret, label, context, n) with
// hash h. It allocates: for rare paths (KeyUpdate, keys from a key log).
func ExpandLabel(h crypto.Hash, secret []byte, label string, context []byte, n int) []byte {
	return newBareKDF(h).expandLabel(make([]byte, 0, n), secret, label, context, n)
}

// RecordKeys are one direction's traffic keys, derived from its traffic
// secret (RFC 8446 §7.3).
type RecordKeys struct {
	Secret []byte // the traffic secret (for KeyUpdate)
	Key    []byte
	IV     [12]byte

	buf [64 + 32]byte
}

// set derives the keys of secret for suite s into r, reusing r's storage.
func (r *RecordKeys) set(k *kdf, s *Suite, secret []byte) {
	r.Secret = append(r.buf[:0], secret...)
	r.Key = k.expandLabel(r.buf[len(secret):len(secret)], secret, "key", nil, s.KeyLen)
	k.expandLabel(r.IV[:0], secret, "iv", nil, len(r.IV))
}

// TrafficKeys returns the record keys of a traffic secret. It allocates:
// for rare paths (KeyUpdate, keys from a key log).
func TrafficKeys(s *Suite, secret []byte) *RecordKeys {
	r := &RecordKeys{}
	r.set(newBareKDF(s.Hash), s, secret)
	return r
}

// KDF is HKDF and HKDF-Expand-Label with one hash, for the key
// derivations of protocols built on this handshake (QUIC's packet
// protection keys, RFC 9001 §5). Its methods allocate nothing once it is
// made (NewKDF allocates). Not safe for concurrent use.
type KDF struct{ k *kdf }

// NewKDF returns a KDF for h (SHA-256 or SHA-384).
func NewKDF(h crypto.Hash) KDF { return KDF{newBareKDF(h)} }

// Extract appends HKDF-Extract(salt, ikm) to dst.
func (k KDF) Extract(dst, salt, ikm []byte) []byte { return k.k.extract(dst, salt, ikm) }

// ExpandLabel appends HKDF-Expand-Label(secret, label, context, n) to dst
// (label without the "tls13 " prefix, at most 249 bytes).
func (k KDF) ExpandLabel(dst, secret []byte, label string, context []byte, n int) []byte {
	return k.k.expandLabel(dst, secret, label, context, n)
}
