package certs

import "path/filepath"

// File names inside a key directory DIR/<key>/.
const (
	certFile      = "cert.pem"
	keyFile       = "key.pem"
	fullChainFile = "fullchain.pem"
	caCopyFile    = "ca.pem"
	combinedFile  = "cert+key.pem"
)

// Paths are the files of one leaf certificate.
type Paths struct {
	Dir       string // DIR/<key>
	Cert      string // leaf certificate alone
	Key       string // private key (PKCS #8), mode 0600
	FullChain string // leaf then CA certificate
	CA        string // copy of the CA certificate, for clients to trust
	Combined  string // leaf, CA, then key in one file (HAProxy's crt), mode 0600
}

// PathsFor returns where the files for key type k live under dir.
func PathsFor(dir string, k KeyType) Paths {
	d := filepath.Join(dir, string(k))
	return Paths{
		Dir:       d,
		Cert:      filepath.Join(d, certFile),
		Key:       filepath.Join(d, keyFile),
		FullChain: filepath.Join(d, fullChainFile),
		CA:        filepath.Join(d, caCopyFile),
		Combined:  filepath.Join(d, combinedFile),
	}
}

// CAPaths are the files of the local CA.
type CAPaths struct {
	Dir  string // DIR/ca
	Cert string // DIR/ca/ca.pem
	Key  string // DIR/ca/ca-key.pem, mode 0600
}

// CAPathsFor returns where the CA of dir lives.
func CAPathsFor(dir string) CAPaths {
	d := filepath.Join(dir, "ca")
	return CAPaths{Dir: d, Cert: filepath.Join(d, "ca.pem"), Key: filepath.Join(d, "ca-key.pem")}
}
