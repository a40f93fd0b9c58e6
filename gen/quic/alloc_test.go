package quic

import (
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
)

// One full handshake and request, in steady state (a reused Conn,
// Client and driver), allocates no more than the crypto constructors:
// per connection the AEADs and AES header protection ciphers of three
// levels (twelve constructor calls, two allocations or fewer each), plus,
// with verification, what crypto/ecdsa's signature check allocates.
func TestAllocsPerConnection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	addr, ca := startServerProcess(t, certs.P256, 1000)
	for _, c := range []struct {
		name     string
		insecure bool
		max      float64
	}{{"insecure", true, 18}, {"verified", false, 30}} {
		cl := newTestClient(t, ca, c.insecure, nil)
		d := newDriver(t, addr)
		var conn Conn
		run := func() {
			if err := d.run(cl, &conn, 5*time.Second); err != nil || conn.Status() != 200 {
				t.Fatalf("%v status %d", err, conn.Status())
			}
		}
		run()
		got := testing.AllocsPerRun(20, run)
		t.Logf("%s: %.1f allocations per connection", c.name, got)
		if got > c.max {
			t.Errorf("%s: %.1f allocations per connection, want <= %v", c.name, got, c.max)
		}
	}
}
