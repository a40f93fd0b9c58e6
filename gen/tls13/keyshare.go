package tls13

import (
	"crypto/ecdh"
	"crypto/rand"
	"errors"

	"github.com/cloudflare/circl/dh/x25519"
)

// Group is a TLS named group for key exchange.
type Group uint16

// The groups this handshake implements.
const (
	X25519 Group = 0x001d
	P256   Group = 0x0017
)

func (g Group) String() string {
	switch g {
	case X25519:
		return "x25519"
	case P256:
		return "p256"
	}
	return "unknown"
}

// shareLen is the length of a key share of g.
func (g Group) shareLen() int {
	if g == P256 {
		return 65 // uncompressed point
	}
	return x25519.Size
}

var errBadShare = &Error{Alert: alertIllegalParameter, msg: "tls: invalid server key share"}

// keyPair is an ephemeral ECDHE key pair of one group. X25519 is circl's
// (no allocation, faster than crypto/ecdh's); P-256 is crypto/ecdh's, which
// allocates a few objects per exchange.
type keyPair struct {
	group        Group
	xPriv, xPub  x25519.Key
	xPeer, xSecr x25519.Key
	p256         *ecdh.PrivateKey
	pub          []byte // the public key as sent in key_share
}

// generate makes a new pair of group g.
func (k *keyPair) generate(g Group) error {
	k.group = g
	switch g {
	case X25519:
		if _, err := rand.Read(k.xPriv[:]); err != nil {
			return err
		}
		x25519.KeyGen(&k.xPub, &k.xPriv)
		k.pub = k.xPub[:]
	case P256:
		priv, err := ecdh.P256().GenerateKey(rand.Reader)
		if err != nil {
			return err
		}
		k.p256 = priv
		k.pub = priv.PublicKey().Bytes()
	default:
		return errors.New("tls: unsupported key-exchange group")
	}
	return nil
}

// shared returns the ECDHE shared secret with the server's share.
func (k *keyPair) shared(peer []byte) ([]byte, error) {
	switch k.group {
	case X25519:
		if len(peer) != x25519.Size {
			return nil, errBadShare
		}
		copy(k.xPeer[:], peer)
		if !x25519.Shared(&k.xSecr, &k.xPriv, &k.xPeer) {
			return nil, errBadShare
		}
		return k.xSecr[:], nil
	case P256:
		pub, err := ecdh.P256().NewPublicKey(peer)
		if err != nil {
			return nil, errBadShare
		}
		s, err := k.p256.ECDH(pub)
		if err != nil {
			return nil, errBadShare
		}
		return s, nil
	}
	return nil, errBadShare
}
