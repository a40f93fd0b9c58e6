package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"strings"
)

// KeyType names the private key of a leaf certificate.
type KeyType string

// The supported key types.
const (
	P256    KeyType = "p256"
	RSA2048 KeyType = "rsa2048"
	RSA4096 KeyType = "rsa4096"
)

// AllKeyTypes returns every supported key type, fastest handshake first.
func AllKeyTypes() []KeyType { return []KeyType{P256, RSA2048, RSA4096} }

// ServerKeyName returns the name results use for k: "ecdsa-p256",
// "rsa-2048" or "rsa-4096".
func (k KeyType) ServerKeyName() string {
	switch k {
	case P256:
		return "ecdsa-p256"
	case RSA2048:
		return "rsa-2048"
	case RSA4096:
		return "rsa-4096"
	}
	return string(k)
}

// Valid reports whether k is a supported key type.
func (k KeyType) Valid() bool { return k == P256 || k == RSA2048 || k == RSA4096 }

// ParseKeyTypes parses a comma-separated list of key types, or "all".
// Case and spaces are ignored, the result-name spellings ("ecdsa-p256",
// "rsa-2048", "rsa-4096") are accepted, and duplicates are dropped.
func ParseKeyTypes(s string) ([]KeyType, error) {
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("empty key type list: use p256, rsa2048, rsa4096 or all")
	}
	var out []KeyType
	seen := map[KeyType]bool{}
	for part := range strings.SplitSeq(s, ",") {
		name := strings.ToLower(strings.TrimSpace(part))
		var add []KeyType
		if name == "all" {
			add = AllKeyTypes()
		} else {
			k, ok := keyTypeByName(name)
			if !ok {
				return nil, fmt.Errorf("unknown key type %q: use p256, rsa2048, rsa4096 or all", strings.TrimSpace(part))
			}
			add = []KeyType{k}
		}
		for _, k := range add {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out, nil
}

// keyTypeByName maps either spelling of a key type to the KeyType.
func keyTypeByName(name string) (KeyType, bool) {
	for _, k := range AllKeyTypes() {
		if name == string(k) || name == k.ServerKeyName() {
			return k, true
		}
	}
	return "", false
}

// newKey generates a private key of type k.
func newKey(k KeyType) (crypto.Signer, error) {
	switch k {
	case P256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case RSA4096:
		return rsa.GenerateKey(rand.Reader, 4096)
	}
	return nil, fmt.Errorf("unknown key type %q: use p256, rsa2048 or rsa4096", k)
}

// publicKeyType names the type of a public key the way KeyType does, or
// describes it ("ecdsa-P-384", "rsa-3072", "ed25519") when it is not one.
func publicKeyType(pub crypto.PublicKey) (KeyType, string) {
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		if p.Curve == elliptic.P256() {
			return P256, P256.ServerKeyName()
		}
		return "", "ecdsa-" + p.Curve.Params().Name
	case *rsa.PublicKey:
		switch p.N.BitLen() {
		case 2048:
			return RSA2048, RSA2048.ServerKeyName()
		case 4096:
			return RSA4096, RSA4096.ServerKeyName()
		}
		return "", fmt.Sprintf("rsa-%d", p.N.BitLen())
	}
	return "", fmt.Sprintf("%T", pub)
}
