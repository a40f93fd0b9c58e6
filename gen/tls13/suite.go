package tls13

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	_ "crypto/sha256" // crypto.SHA256.New
	_ "crypto/sha512" // crypto.SHA384.New
	"crypto/tls"

	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/sys/cpu"
)

// Suite is a TLS 1.3 cipher suite: its AEAD and its key schedule's hash.
type Suite struct {
	ID     uint16
	KeyLen int         // AEAD key bytes
	ChaCha bool        // ChaCha20-Poly1305 (else AES-GCM)
	Hash   crypto.Hash // SHA-256 or SHA-384
}

var suites = [...]Suite{
	{tls.TLS_AES_128_GCM_SHA256, 16, false, crypto.SHA256},
	{tls.TLS_AES_256_GCM_SHA384, 32, false, crypto.SHA384},
	{tls.TLS_CHACHA20_POLY1305_SHA256, 32, true, crypto.SHA256},
}

// SuiteByID returns the suite with TLS identifier id, or nil.
func SuiteByID(id uint16) *Suite {
	for i := range suites {
		if suites[i].ID == id {
			return &suites[i]
		}
	}
	return nil
}

// SuiteByName returns the suite called name: its IANA name
// (TLS_AES_128_GCM_SHA256) or a short one (aes128gcm, aes256gcm, chacha20).
func SuiteByName(name string) *Suite {
	switch name {
	case "aes128gcm", "aes128", "TLS_AES_128_GCM_SHA256":
		return &suites[0]
	case "aes256gcm", "aes256", "TLS_AES_256_GCM_SHA384":
		return &suites[1]
	case "chacha20", "chacha20poly1305", "TLS_CHACHA20_POLY1305_SHA256":
		return &suites[2]
	}
	return nil
}

// hasAESHardware reports AES and carry-less multiplication in hardware,
// which makes AES-GCM faster than ChaCha20-Poly1305.
var hasAESHardware = (cpu.X86.HasAES && cpu.X86.HasPCLMULQDQ) ||
	(cpu.ARM64.HasAES && cpu.ARM64.HasPMULL) || cpu.S390X.HasAES

// DefaultSuites returns the suites offered by default, in order: AES-GCM
// first on CPUs with AES instructions, ChaCha20-Poly1305 first elsewhere
// (crypto/tls orders them the same way).
func DefaultSuites() []uint16 {
	if hasAESHardware {
		return []uint16{tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384, tls.TLS_CHACHA20_POLY1305_SHA256}
	}
	return []uint16{tls.TLS_CHACHA20_POLY1305_SHA256, tls.TLS_AES_128_GCM_SHA256, tls.TLS_AES_256_GCM_SHA384}
}

// NewAEAD returns the record protection AEAD for key: AES-GCM, or
// ChaCha20-Poly1305 when chacha is set. Both allocate (the standard
// library has no way to re-key an AEAD).
func NewAEAD(key []byte, chacha bool) (cipher.AEAD, error) {
	if chacha {
		return chacha20poly1305.New(key)
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}
