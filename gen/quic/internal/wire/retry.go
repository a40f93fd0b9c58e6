package wire

import (
	"crypto/aes"
	"crypto/cipher"
	"sync"
)

// RetryTagLen is the length of a Retry packet's integrity tag.
const RetryTagLen = 16

var (
	retryKey   = []byte{0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e}
	retryNonce = []byte{0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb}
	// retryAEAD is made once; cipher.AEAD from crypto/cipher's GCM is
	// safe for concurrent use (it keeps no state between calls).
	retryAEAD = sync.OnceValue(func() cipher.AEAD {
		b, err := aes.NewCipher(retryKey)
		if err != nil {
			panic(err)
		}
		g, err := cipher.NewGCM(b)
		if err != nil {
			panic(err)
		}
		return g
	})
)

// VerifyRetry checks the integrity tag of the Retry packet pkt (the whole
// datagram) for the original destination connection ID odcid (RFC 9001
// §5.8). scratch holds the pseudo-packet; it is returned for reuse.
func VerifyRetry(scratch, odcid, pkt []byte) (bool, []byte) {
	if len(pkt) < RetryTagLen {
		return false, scratch
	}
	ps := append(scratch[:0], byte(len(odcid)))
	ps = append(ps, odcid...)
	ps = append(ps, pkt[:len(pkt)-RetryTagLen]...)
	_, err := retryAEAD().Open(nil, retryNonce, pkt[len(pkt)-RetryTagLen:], ps)
	return err == nil, ps
}

// AppendRetryTag appends the integrity tag of the Retry packet pkt (tag
// not included) for odcid: for tests that play a server.
func AppendRetryTag(pkt, odcid []byte) []byte {
	ps := append([]byte{byte(len(odcid))}, odcid...)
	ps = append(ps, pkt...)
	return retryAEAD().Seal(pkt, retryNonce, nil, ps)
}
