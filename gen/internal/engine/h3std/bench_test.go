package h3std

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/internal/testutil"
)

// BenchmarkH3Request measures one keep-alive request on one HTTP/3
// connection as a worker runs it (send, read the 1 KiB response, record),
// against an in-process quic-go server: the allocations are quic-go's and
// http3's (both sides) plus ours.
func BenchmarkH3Request(b *testing.B) {
	body := testutil.Body(1024)
	s := testutil.StartH3Server(b, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.Write(body)
	}), testutil.H3Options{})
	tgt := run.Target{URL: s.URL, Scheme: "https", Host: "127.0.0.1", Port: s.Port, Path: "/", HostHeader: s.Addr}
	spec := &run.Spec{Reqs: []run.Req{{Method: "GET", Target: tgt}}, Target: tgt, Connections: 1, Duration: time.Hour,
		Timeout: 5 * time.Second, HTTP3: true, Shards: 1, StartTolerance: time.Second,
		TLS: run.TLS{Version: tls.VersionTLS13, Curves: []string{"x25519"}, CAFile: s.CA, Hello: "go", ALPN: "http/1.1"}}
	h, err := run.NewHand(spec, New, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	l := h.LC.D.(*loop)
	c := l.conns[0]
	defer c.closeAll()
	h.Run.Start = time.Now()
	one := func() {
		job, _ := l.startClosed(c)
		c.do(job)
		l.settle(c)
		if c.out.err != nil {
			b.Fatal(c.out.err)
		}
	}
	one() // handshake
	b.ReportAllocs()
	for b.Loop() {
		one()
	}
}
