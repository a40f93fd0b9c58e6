package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// Action says what Ensure did with a set of files.
type Action string

// The actions Ensure reports.
const (
	Reused   Action = "reused"   // valid files kept untouched (modes may be fixed)
	Created  Action = "created"  // new key and certificate written
	Repaired Action = "repaired" // certificate kept, derived files rewritten
)

// LeafResult is the outcome for one key type.
type LeafResult struct {
	Paths  Paths
	Action Action
	Reason string // why it was created or repaired; "" when reused
}

// Result is the outcome of EnsureResult.
type Result struct {
	CA       CAPaths
	CAAction Action // Created or Reused
	CAReason string
	Leaves   map[KeyType]LeafResult
	Keys     []KeyType // the key types handled, in request order
}

// Ensure makes sure o.Dir holds a local CA and, for every key type in o.Keys,
// a valid leaf certificate with the files described by Paths. Valid files
// are reused; a leaf is regenerated when it is missing, expired or expiring
// within 24h, its key does not match or is of the wrong type, its SANs miss
// a requested name, or the CA did not sign it. A new CA therefore brings new
// leaves. Calls on one directory are serialized with a lock file.
func Ensure(o Options) (map[KeyType]Paths, error) {
	r, err := EnsureResult(o)
	if err != nil {
		return nil, err
	}
	out := make(map[KeyType]Paths, len(r.Leaves))
	for k, l := range r.Leaves {
		out[k] = l.Paths
	}
	return out, nil
}

// EnsureResult is Ensure that also says, per file set, whether it was
// created, repaired or reused, and why.
func EnsureResult(o Options) (*Result, error) {
	n, err := o.normalize()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(n.dir, dirMode); err != nil {
		return nil, fmt.Errorf("create certificate directory: %w", err)
	}
	unlock, err := lockDir(n.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	c, why, err := ensureCA(n)
	if err != nil {
		return nil, err
	}
	r := &Result{CA: CAPathsFor(n.dir), CAAction: Reused, Leaves: map[KeyType]LeafResult{}, Keys: n.keys}
	if why != "" {
		r.CAAction, r.CAReason = Created, why
	}
	for _, k := range n.keys {
		action, why, err := ensureLeaf(n, c, k)
		if err != nil {
			return nil, fmt.Errorf("%s certificate: %w", k.ServerKeyName(), err)
		}
		if action == Created && r.CAAction == Created && why != "missing" {
			why = "the CA was recreated (" + r.CAReason + ")"
		}
		r.Leaves[k] = LeafResult{Paths: PathsFor(n.dir, k), Action: action, Reason: why}
	}
	return r, nil
}

// LoadKeyPair loads the full chain and key of p for a tls.Config.
func (p Paths) LoadKeyPair() (tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
	if err != nil {
		return c, fmt.Errorf("load %s: %w (run `loadlab certs` to recreate it)", p.Dir, err)
	}
	return c, nil
}

// CertPool returns a pool trusting the CA copy in p, for TLS clients.
func (p Paths) CertPool() (*x509.CertPool, error) {
	return LoadCertPool(p.CA)
}

// LoadCertPool returns a pool trusting the PEM certificates in file.
func LoadCertPool(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read CA: %w (run `loadlab certs` to create it)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate: run `loadlab certs` to recreate it", file)
	}
	return pool, nil
}
