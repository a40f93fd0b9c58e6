package tls13

import (
	"crypto/tls"
	"net"
	"testing"
	"time"
)

// BenchmarkHandshakeTCP is one lean TLS 1.3 handshake over a new TCP
// connection per op (insecure, X25519, a P-256 certificate) against an
// in-process crypto/tls server. hs-µs/op is the time inside Start and
// Read: the state machine's cost, to compare with gen/quic's conn-µs/op.
func BenchmarkHandshakeTCP(b *testing.B) {
	p := pki(b)
	addr, errc := serve(b, &tls.Config{Certificates: []tls.Certificate{p.leaves["p256"]}})
	go func() {
		for range errc { // serve reports each handshake; keep it from blocking
		}
	}()
	c := newClient(b, &Config{ServerName: "localhost"})
	var h Handshake
	buf := make([]byte, 64<<10)
	out := make([]byte, 0, 4096)
	var inside time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		t0 := time.Now()
		out, _ = h.Start(c, out[:0])
		inside += time.Since(t0)
		conn.Write(out)
		n, done := 0, false
		for !done {
			r, err := conn.Read(buf[n:])
			if r == 0 && err != nil {
				b.Fatal(err)
			}
			n += r
			t0 = time.Now()
			var used int
			used, out, done, err = h.Read(buf[:n], out[:0])
			inside += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			n = copy(buf, buf[used:n])
			if len(out) > 0 {
				conn.Write(out)
			}
		}
		conn.Close()
	}
	b.ReportMetric(float64(inside.Microseconds())/float64(b.N), "hs-µs/op")
}
