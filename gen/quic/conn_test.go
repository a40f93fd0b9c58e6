package quic

import (
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/internal/testutil"
)

func TestQuicGoServer(t *testing.T) {
	small, big := testutil.Body(1000), testutil.Body(1<<20)
	for _, key := range []certs.KeyType{certs.P256, certs.RSA2048} {
		for _, insecure := range []bool{false, true} {
			name := string(key)
			if insecure {
				name += "-insecure"
			}
			t.Run(name, func(t *testing.T) {
				for _, body := range [][]byte{small, big} {
					srv := startServer(t, bodyHandler(body), serverOpts{key: key})
					cl := newTestClient(t, srv.ca, insecure, nil)
					getN(t, newDriver(t, srv.addr), cl, 3, body)
				}
			})
		}
	}
}
