package wire

import (
	"crypto/tls"

	"github.com/loadlab/loadlab/gen/tls13"
)

// initialSaltV1 is version 1's Initial salt (RFC 9001 §5.2).
var initialSaltV1 = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17, 0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}

// InitialSuite is the suite of Initial packets: AES-128-GCM with SHA-256.
var InitialSuite = tls13.SuiteByID(tls.TLS_AES_128_GCM_SHA256)

// InitialSecrets writes the client's and the server's Initial secrets for
// the client's first destination connection ID dcid to the two buffers.
// k must be a SHA-256 KDF. It allocates (its scratch escapes through the
// hash interface); SetInitialKeys does not.
func InitialSecrets(k tls13.KDF, dcid []byte, client, server *[32]byte) {
	var initial [32]byte
	k.Extract(initial[:0], initialSaltV1, dcid)
	k.ExpandLabel(client[:0], initial[:], "client in", nil, 32)
	k.ExpandLabel(server[:0], initial[:], "server in", nil, 32)
}

// SetInitialKeys derives both directions' Initial keys for dcid (k must
// be a SHA-256 KDF), using the Keys' own storage as scratch.
func SetInitialKeys(k tls13.KDF, dcid []byte, client, server *Keys) error {
	initial := k.Extract(client.secret[:0], initialSaltV1, dcid)
	ss := k.ExpandLabel(server.secret[:0], initial, "server in", nil, 32)
	cs := k.ExpandLabel(client.key[:0], initial, "client in", nil, 32)
	copy(client.secret[:], cs)
	if err := client.Set(k, InitialSuite, client.secret[:32]); err != nil {
		return err
	}
	return server.Set(k, InitialSuite, ss)
}
