package gen

import (
	"context"
	"testing"
	"time"

	"github.com/loadlab/loadlab/pin"
)

// BenchmarkH3Request measures one keep-alive request on one HTTP/3
// connection as a worker runs it (send, read the 1 KiB response, record),
// against an in-process quic-go server: the allocations are quic-go's and
// http3's (both sides) plus ours.
func BenchmarkH3Request(b *testing.B) {
	s := startH3Server(b, fixedBody(1024))
	cfg := Config{URL: s.url, HTTP3: true, Connections: 1, Duration: time.Hour, Timeout: 5 * time.Second, TLS: TLSOptions{CAFile: s.caFile}}
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		b.Fatal(err)
	}
	e, err := prepareH3(context.Background(), &cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer e.r.close()
	e.cpus, _ = pin.Allowed()
	req, err := e.newRequest()
	if err != nil {
		b.Fatal(err)
	}
	if err := e.buildLoops(1, 1000, req); err != nil {
		b.Fatal(err)
	}
	l := e.loops[0]
	c := l.conns[0]
	defer c.closeAll()
	e.r.start = time.Now()
	run := func() {
		l.inflight++
		c.do(h3Job{intended: l.now()})
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
