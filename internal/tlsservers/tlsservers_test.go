package tlsservers

import (
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/certs"
)

// Each installed server starts and serves /1k (Start checks it) with a
// P-256 certificate, and stops.
func TestStartEach(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	dir := testutil.CertDir(t)
	for _, k := range All {
		t.Run(string(k), func(t *testing.T) {
			s := Start(t, k, Options{Cert: certs.PathsFor(dir, certs.P256), P256Only: CanP256Only(k)})
			if err := s.get(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
