package tls13

import (
	"crypto"
	"hash"
	"io"
	"slices"
)

// Client is one event loop's handshake state: its copy of the ClientHello
// template, its key pairs (reused across handshakes unless
// Config.FreshKeyShare) and scratch space. Not safe for concurrent use.
type Client struct {
	cfg      *Config
	hello    []byte     // the template, this Client's key share filled in
	keys     [2]keyPair // X25519, P-256: generated when first needed
	have     [2]bool    // keys[i] generated
	kdfs     [2]*kdf    // SHA-256, SHA-384
	sig      *sigVerifier
	chainSum hash.Hash // SHA-256 over the chain, the Verifier's cache key
	chainKey [32]byte
	lenBuf   [4]byte

	// KeepLeaf makes each handshake keep a copy of the server's leaf
	// certificate (Handshake.Leaf), e.g. until its key type is noted.
	KeepLeaf bool
	// Trace, if set, is called with each handshake message from the
	// server (its 4-byte header included) before it is processed; msg is
	// valid only during the call. For debugging and capturing fuzz seeds.
	Trace func(msg []byte)

	rand io.Reader // tests: the source of randoms (nil: crypto/rand)
}

// NewClient returns a Client for cfg, which must be prepared.
func NewClient(cfg *Config) (*Client, error) {
	if cfg.hello == nil {
		panic("tls13: NewClient with a Config that was not prepared")
	}
	c := &Client{cfg: cfg, kdfs: [2]*kdf{newKDF(crypto.SHA256), newKDF(crypto.SHA384)}}
	if cfg.Verifier != nil {
		c.sig = newSigVerifier()
		c.chainSum = crypto.SHA256.New()
	}
	c.hello = slices.Clone(cfg.hello)
	if !cfg.FreshKeyShare {
		k, err := c.key(cfg.Groups[0])
		if err != nil {
			return nil, err
		}
		copy(c.hello[cfg.offShare:], k.pub)
	}
	return c, nil
}

func groupIndex(g Group) int {
	if g == P256 {
		return 1
	}
	return 0
}

// key returns the Client's reused key pair of group g.
func (c *Client) key(g Group) (*keyPair, error) {
	i := groupIndex(g)
	if !c.have[i] {
		if err := c.keys[i].generate(g); err != nil {
			return nil, err
		}
		c.have[i] = true
	}
	return &c.keys[i], nil
}

func (c *Client) kdfFor(s *Suite) *kdf {
	if s.Hash == crypto.SHA384 {
		return c.kdfs[1]
	}
	return c.kdfs[0]
}
