package gen

import (
	"testing"
	"time"
)

// BenchmarkH3Request measures one keep-alive request on one HTTP/3
// connection as a worker runs it (send, read the 1 KiB response, record),
// against an in-process quic-go server: the allocations are quic-go's and
// http3's (both sides) plus ours.
func BenchmarkH3Request(b *testing.B) {
	s := startH3Server(b, fixedBody(1024))
	cfg := Config{URL: s.url, HTTP3: true, Connections: 1, Duration: time.Hour, Timeout: 5 * time.Second, TLS: TLSOptions{CAFile: s.caFile}}
	r, d := handDriver(b, cfg)
	l := d.(*h3Loop)
	c := l.conns[0]
	defer c.closeAll()
	r.start = time.Now()
	run := func() {
		job, _ := l.startClosed(c)
		c.do(job)
		l.settle(c)
		if c.out.err != nil {
			b.Fatal(c.out.err)
		}
	}
	run() // handshake
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}
