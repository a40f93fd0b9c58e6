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

// BenchmarkLeanKeepAlive: one keep-alive GET (1000-byte body) per op on
// one connection with this package, insecure, against quic-go's server
// in a child process; cpu-µs/op is the whole client process
// (getrusage: the state machine, the test driver's socket calls, the Go
// runtime), conn-µs/op the time inside the Conn's methods.
func BenchmarkLeanKeepAlive(b *testing.B) {
	addr, ca := startServerProcess(b, certs.P256, 1000)
	cl := newTestClient(b, ca, true, func(c *Config) { c.KeepAlive = true })
	d := newDriver(b, addr)
	var c Conn
	if err := d.first(cl, &c, 5*time.Second); err != nil || c.Status() != 200 {
		b.Fatalf("%v status %d", err, c.Status())
	}
	for i := 0; i < 150; i++ { // past quic-go's first key update
		if err := d.next(&c, 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	d.sm = 0
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		if !c.Reusable(time.Now()) {
			b.Fatalf("request %d: the connection is not reusable", c.Requests())
		}
		if err := d.next(&c, 5*time.Second); err != nil || c.Status() != 200 || c.BodyBytes() != 1000 {
			b.Fatalf("%v status %d", err, c.Status())
		}
	}
	reportCPU(b, start)
	b.ReportMetric(float64(d.sm.Nanoseconds())/1e3/float64(b.N), "conn-µs/op")
	b.StopTimer()
	d.closeConn(&c)
}

// BenchmarkQuicGoKeepAlive is BenchmarkLeanKeepAlive with quic-go's
// plain HTTP/3 client: one http3.Transport (one QUIC connection), one
// request at a time.
func BenchmarkQuicGoKeepAlive(b *testing.B) {
	addr, _ := startServerProcess(b, certs.P256, 1000)
	url := "https://" + addr + "/body"
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "localhost"}}
	defer tr.Close()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	get := func() {
		resp, err := hc.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	for i := 0; i < 150; i++ {
		get()
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for i := 0; i < b.N; i++ {
		get()
	}
	reportCPU(b, start)
}
