package quic

import (
	"crypto/tls"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/quic-go/quic-go/http3"
)

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the process's CPU time per op: the client's alone,
// the server being another process.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkLean: one new connection, handshake and GET (1000-byte body)
// per op with this package, insecure, against quic-go's server in a
// child process.
func BenchmarkLean(b *testing.B) {
	addr, ca := startServerProcess(b, certs.P256, 1000)
	cl := newTestClient(b, ca, true, nil)
	d := newDriver(b, addr)
	d.sm = 0
	var c Conn
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := d.run(cl, &c, 5*time.Second); err != nil || c.Status() != 200 {
			b.Fatalf("%v status %d", err, c.Status())
		}
	}
	reportCPU(b, start)
	// The state machine's own time (Start, Receive, Timeout): the CPU an
	// event loop spends on a connection besides its socket calls.
	b.ReportMetric(float64(d.sm.Microseconds())/float64(b.N), "conn-µs/op")
}

// BenchmarkQuicGo is BenchmarkLean with quic-go's plain HTTP/3 client:
// one http3.Transport (so one QUIC connection) per op.
func BenchmarkQuicGo(b *testing.B) {
	addr, _ := startServerProcess(b, certs.P256, 1000)
	url := "https://" + addr + "/body"
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}}
		resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
		tr.Close()
	}
	reportCPU(b, start)
}
