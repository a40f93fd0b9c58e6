// Command h3plain is the plain quic-go HTTP/3 client a Go user would write,
// as the baseline of scripts/bench-h3.sh: each of -c goroutines owns an
// http.Client over its own http3.Transport (so its own UDP socket and QUIC
// connection) and runs one request at a time, reading the body to its end
// and discarding it. With --new-conn each request gets a new
// http3.Transport, closed after it (a new QUIC connection and handshake
// per request). Nothing is timed or recorded per request: what it costs is
// quic-go's and net/http's.
//
// Usage: h3plain -c 10 (-n 100000 | -d 10s) [--new-conn] [--insecure | --ca CA.pem]
//
//	[--sni NAME] [--host HOST] https://127.0.0.1:PORT/path
//
// -n stops after that many requests in all (the goroutines share the
// count); -d bounds the run either way (default 10s when -n is not given,
// 10m when it is).
// Output: one JSON line {"requests":N,"ok2xx":N,"errors":E,"elapsed_s":S}
// (requests = 2xx + other statuses + errors), and up to three error
// samples on stderr.
//
// Imports: a measurement tool, not part of loadlab's commands: none of
// loadlab's packages; nothing imports it.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/http3"
)

type result struct {
	Requests int64   `json:"requests"`
	OK2xx    int64   `json:"ok2xx"`
	Errors   int64   `json:"errors"`
	Elapsed  float64 `json:"elapsed_s"`
}

func main() {
	conns := flag.Int("c", 10, "connections (goroutines), one request at a time each")
	total := flag.Int64("n", 0, "requests in all, then stop (0: until -d)")
	dur := flag.Duration("d", 0, "run at most this long (default 10s without -n, 10m with it)")
	newConn := flag.Bool("new-conn", false, "a new http3.Transport (QUIC connection, full handshake) per request")
	insecure := flag.Bool("insecure", false, "do not verify the server's certificate")
	caFile := flag.String("ca", "", "PEM file of the CA that signed the server's certificate")
	sni := flag.String("sni", "", "TLS server name (default the URL's host)")
	host := flag.String("host", "", "Host (:authority) of the requests (default the URL's)")
	timeout := flag.Duration("timeout", 5*time.Second, "per request, dial included")
	flag.Parse()
	if flag.NArg() != 1 || *conns < 1 || *total < 0 || *dur < 0 || *timeout <= 0 || (*insecure && *caFile != "") {
		fmt.Fprintln(os.Stderr, "usage: h3plain -c N (-n REQUESTS | -d DURATION) [--new-conn] [--insecure | --ca CA.pem] [--sni NAME] [--host HOST] https://127.0.0.1:PORT/path")
		os.Exit(2)
	}
	target := flag.Arg(0)
	if u, err := url.Parse(target); err != nil || u.Scheme != "https" || u.Host == "" {
		fail("want an https:// URL, got %q", target)
	}
	if *dur == 0 {
		*dur = 10 * time.Second
		if *total > 0 {
			*dur = 10 * time.Minute
		}
	}
	tlsConf := &tls.Config{ServerName: *sni, InsecureSkipVerify: *insecure} //nolint:gosec // --insecure asks for it
	if *caFile != "" {
		pem, err := os.ReadFile(*caFile)
		if err != nil {
			fail("%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			fail("%s: no PEM certificate", *caFile)
		}
		tlsConf.RootCAs = pool
	}

	var (
		left               atomic.Int64 // requests not yet started (-n)
		requests, ok, errs atomic.Int64
		samplesMu          sync.Mutex
		samples            []string
		wg                 sync.WaitGroup
		start              = time.Now()
		end                = start.Add(*dur)
		ctx, cancel        = context.WithDeadline(context.Background(), end)
		newTransport       = func() *http3.Transport { return &http3.Transport{TLSClientConfig: tlsConf.Clone()} }
		take               = func() bool { return *total == 0 || left.Add(-1) >= 0 }
		noteErr            = func(err error) {
			errs.Add(1)
			samplesMu.Lock()
			if len(samples) < 3 {
				samples = append(samples, err.Error())
			}
			samplesMu.Unlock()
		}
	)
	defer cancel()
	left.Store(*total)
	one := func(client *http.Client) {
		rctx, rcancel := context.WithTimeout(ctx, *timeout)
		defer rcancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, target, nil)
		if err != nil {
			fail("%v", err)
		}
		if *host != "" {
			req.Host = *host
		}
		rsp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, rsp.Body)
			rsp.Body.Close()
		}
		if ctx.Err() != nil {
			return // the run ended under it: not counted
		}
		requests.Add(1)
		switch {
		case err != nil:
			noteErr(err)
		case rsp.StatusCode >= 200 && rsp.StatusCode < 300:
			ok.Add(1)
		}
	}
	for i := 0; i < *conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if *newConn {
				for ctx.Err() == nil && take() {
					tr := newTransport()
					one(&http.Client{Transport: tr})
					tr.Close()
				}
				return
			}
			tr := newTransport()
			defer tr.Close()
			client := &http.Client{Transport: tr}
			for ctx.Err() == nil && take() {
				one(client)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, s := range samples {
		fmt.Fprintln(os.Stderr, "h3plain: error:", s)
	}
	json.NewEncoder(os.Stdout).Encode(result{ //nolint:errcheck // stdout
		Requests: requests.Load(), OK2xx: ok.Load(), Errors: errs.Load(), Elapsed: elapsed.Seconds(),
	})
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "h3plain: "+format+"\n", a...)
	os.Exit(1)
}
