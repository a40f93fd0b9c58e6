package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"errors"

	"github.com/loadlab/loadlab/gen/tls13"
	"golang.org/x/crypto/chacha20"
)

// Keys are one direction's packet protection at one encryption level
// (RFC 9001 §5): the AEAD, its IV and the header protection key. Set
// allocates (the AEAD and, for AES, the header protection block cipher);
// Seal and Open do not. Not safe for concurrent use.
type Keys struct {
	aead   cipher.AEAD
	iv     [12]byte
	hp     cipher.Block // AES suites
	chacha bool
	hpKey  [32]byte // ChaCha20 header protection key
	nonce  [12]byte
	mask   [16]byte
	key    [32]byte
	secret [32]byte // scratch for SetInitialKeys
}

// ErrDecrypt is a packet that failed authentication (or header
// protection removal): it is dropped, not a connection error.
var ErrDecrypt = errors.New("quic: packet failed authentication")

// Set derives the keys of secret for suite s (labels "quic key", "quic
// iv", "quic hp") with k, whose hash must be s's.
func (p *Keys) Set(k tls13.KDF, s *tls13.Suite, secret []byte) error {
	key := k.ExpandLabel(p.key[:0], secret, "quic key", nil, s.KeyLen)
	aead, err := tls13.NewAEAD(key, s.ChaCha)
	if err != nil {
		return err
	}
	k.ExpandLabel(p.iv[:0], secret, "quic iv", nil, 12)
	hp := k.ExpandLabel(p.key[:0], secret, "quic hp", nil, s.KeyLen)
	p.chacha = s.ChaCha
	if s.ChaCha {
		copy(p.hpKey[:], hp)
		p.hp = nil
	} else if p.hp, err = aes.NewCipher(hp); err != nil {
		return err
	}
	p.aead = aead
	return nil
}

// Ready reports that the keys are set.
func (p *Keys) Ready() bool { return p.aead != nil }

// Drop discards the keys (RFC 9001 §4.9).
func (p *Keys) Drop() { p.aead, p.hp = nil, nil }

// Overhead is the AEAD tag length (16 for all of version 1's suites).
const Overhead = 16

// headerMask computes the header protection mask from a 16-byte sample.
func (p *Keys) headerMask(sample []byte) []byte {
	if !p.chacha {
		p.hp.Encrypt(p.mask[:], sample)
		return p.mask[:5]
	}
	c, err := chacha20.NewUnauthenticatedCipher(p.hpKey[:], sample[4:16])
	if err != nil {
		panic(err) // lengths are fixed
	}
	c.SetCounter(uint32(sample[0]) | uint32(sample[1])<<8 | uint32(sample[2])<<16 | uint32(sample[3])<<24)
	clear(p.mask[:5])
	c.XORKeyStream(p.mask[:5], p.mask[:5])
	return p.mask[:5]
}

func (p *Keys) nonceFor(pn uint64) []byte {
	p.nonce = p.iv
	for i := 0; i < 8; i++ {
		p.nonce[4+i] ^= byte(pn >> (56 - 8*i))
	}
	return p.nonce[:]
}

// Seal protects the packet that starts at b[start]: its header runs to
// pnOff+PacketNumberLen, its plaintext payload to len(b). lenOff is its
// two-byte Length field's offset (-1 for a short header), filled in here.
// The payload must be at least 4 bytes (for the header protection
// sample) — PADDING if need be. It returns b with the tag appended.
func (p *Keys) Seal(b []byte, start, lenOff, pnOff int, pn uint64) []byte {
	hdrEnd := pnOff + PacketNumberLen
	if lenOff >= 0 {
		PutVarint2(b[lenOff:], len(b)-pnOff+Overhead)
	}
	payload := b[hdrEnd:]
	b = p.aead.Seal(b[:hdrEnd], p.nonceFor(pn), payload, b[start:hdrEnd])
	mask := p.headerMask(b[pnOff+4 : pnOff+20])
	if b[start]&0x80 != 0 {
		b[start] ^= mask[0] & 0x0f
	} else {
		b[start] ^= mask[0] & 0x1f
	}
	for i := 0; i < PacketNumberLen; i++ {
		b[pnOff+i] ^= mask[1+i]
	}
	return b
}

// Open removes the protection of the packet pkt (exactly one packet, its
// header starting at pkt[0], its packet number at pnOff) in place, given
// the largest packet number received in its space (-1: none). It returns
// the full packet number and the plaintext payload, a slice of pkt.
func (p *Keys) Open(pkt []byte, pnOff int, largest int64) (pn uint64, payload []byte, err error) {
	pn, hdrEnd, err := p.Unprotect(pkt, pnOff, largest)
	if err != nil {
		return 0, nil, err
	}
	payload, err = p.Decrypt(pkt, hdrEnd, pn)
	return pn, payload, err
}

// Unprotect removes header protection in place (Open's first half): it
// returns the packet number and where the header ends. The first byte's
// key phase bit (KeyPhase) is then readable.
func (p *Keys) Unprotect(pkt []byte, pnOff int, largest int64) (pn uint64, hdrEnd int, err error) {
	if len(pkt) < pnOff+4+16 {
		return 0, 0, ErrDecrypt
	}
	mask := p.headerMask(pkt[pnOff+4 : pnOff+20])
	first := pkt[0]
	if first&0x80 != 0 {
		first ^= mask[0] & 0x0f
	} else {
		first ^= mask[0] & 0x1f
	}
	n := int(first&3) + 1
	var trunc uint64
	for i := 0; i < n; i++ {
		pkt[pnOff+i] ^= mask[1+i]
		trunc = trunc<<8 | uint64(pkt[pnOff+i])
	}
	pkt[0] = first
	if first&0x80 == 0 && first&0x18 != 0 || first&0x80 != 0 && first&0x0c != 0 {
		// Reserved bits set after removing protection: a
		// PROTOCOL_VIOLATION, treated here as a failed packet.
		return 0, 0, ErrDecrypt
	}
	return DecodePacketNumber(largest, trunc, n), pnOff + n, nil
}

// Decrypt authenticates and decrypts the payload of a packet whose header
// protection Unprotect removed (Open's second half), in place.
func (p *Keys) Decrypt(pkt []byte, hdrEnd int, pn uint64) ([]byte, error) {
	payload, err := p.aead.Open(pkt[hdrEnd:hdrEnd], p.nonceFor(pn), pkt[hdrEnd:], pkt[:hdrEnd])
	if err != nil {
		return nil, ErrDecrypt
	}
	return payload, nil
}

// NextSecret appends the next 1-RTT secret after secret (RFC 9001 §6.1,
// label "quic ku") to dst.
func NextSecret(k tls13.KDF, dst, secret []byte) []byte {
	return k.ExpandLabel(dst, secret, "quic ku", nil, len(secret))
}

// Update makes p the keys of the next key phase: a new AEAD and IV from
// secret (the next secret), the header protection key of from, which
// header protection keeps across updates. It allocates (the AEAD).
func (p *Keys) Update(k tls13.KDF, s *tls13.Suite, secret []byte, from *Keys) error {
	key := k.ExpandLabel(p.key[:0], secret, "quic key", nil, s.KeyLen)
	aead, err := tls13.NewAEAD(key, s.ChaCha)
	if err != nil {
		return err
	}
	k.ExpandLabel(p.iv[:0], secret, "quic iv", nil, 12)
	p.aead, p.hp, p.chacha, p.hpKey = aead, from.hp, from.chacha, from.hpKey
	return nil
}

// KeyPhase reports the key phase bit of an unprotected short header's
// first byte (after Open).
func KeyPhase(first byte) bool { return first&0x04 != 0 }
