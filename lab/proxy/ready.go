package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

// ReadyPath is the backend path readiness fetches through the proxy, and
// ReadySize the body length it must return.
const (
	ReadyPath = "/1k"
	ReadySize = 1024
)

// readyInterval is the pause between readiness attempts.
const readyInterval = 50 * time.Millisecond

// Ready polls GET https://ListenHost:HTTPSPort/1k with Host and SNI set to
// ServerName until it returns 200 with ReadySize bytes (the profile's
// FixedBody when set) and the server presents the leaf certificate of
// CertFile, or ctx ends. (The lab's sessions probe over their own scheme
// and CA; this is the readiness of a server started by hand.)
func (prof Profile) Ready(ctx context.Context, p Params) error {
	fixed := prof.FixedBody
	if err := p.validate(); err != nil {
		return err
	}
	leaf, err := firstCertDER(p.CertFile)
	if err != nil {
		return err
	}
	addr := hostPort(p.ListenHost, p.HTTPSPort)
	var last error
	for {
		last = probeHTTPS(ctx, addr, p.ServerName, leaf, fixed)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("proxy on %s not ready (%v): see the logs in %s", addr, last, p.Dir)
		case <-time.After(readyInterval):
		}
	}
}

// probeHTTPS makes one HTTP/1.1 request of ReadyPath over TLS to addr;
// fixed, if set, is the body it must answer.
func probeHTTPS(ctx context.Context, addr, serverName string, leaf, fixed []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{
			ServerName: serverName,
			// The lab's CA is not in the system pool; instead of a chain
			// check, require exactly the leaf the proxy was given.
			InsecureSkipVerify: true,
			NextProtos:         []string{"http/1.1"},
			VerifyConnection: func(cs tls.ConnectionState) error {
				if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, leaf) {
					return errors.New("proxy presented a certificate other than CertFile's leaf")
				}
				return nil
			},
		},
		DisableKeepAlives: true,
	}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+serverName+ReadyPath, nil)
	if err != nil {
		return err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("reading %s: %v", ReadyPath, err)
	}
	if fixed != nil {
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, fixed) {
			return fmt.Errorf("GET %s returned %d with %q, want 200 with %q", ReadyPath, resp.StatusCode, body, fixed)
		}
		return nil
	}
	if resp.StatusCode != http.StatusOK || len(body) != ReadySize {
		return fmt.Errorf("GET %s returned %d with %d bytes, want 200 with %d", ReadyPath, resp.StatusCode, len(body), ReadySize)
	}
	return nil
}

// firstCertDER returns the DER bytes of the first certificate in a PEM file.
func firstCertDER(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading certificate: %v: create it with loadlab certs", err)
	}
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, fmt.Errorf("%s holds no PEM CERTIFICATE: give the leaf or full chain file", file)
		}
		if blk.Type == "CERTIFICATE" {
			return blk.Bytes, nil
		}
	}
}
