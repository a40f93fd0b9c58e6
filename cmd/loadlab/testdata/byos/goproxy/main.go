// goproxy is a small reverse proxy the lab's tests build and define to the
// lab only by a profile file (../goproxy.yaml) and a template: net/http's
// server over HTTP/1.1 and HTTP/2 (TLS), httputil.ReverseProxy to the
// backend of the request's Host, and an idle backend pool of -pool
// connections (http.Transport.MaxIdleConnsPerHost).
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const version = "goproxy 1.0"

// config is what the rendered goproxy.conf says, one "key value" a line.
type config struct {
	http, https, cert, key, errorLog string
	routes                           map[string]string // host -> backend host:port
	first                            string            // the first route's backend: any other Host
}

func readConfig(path string) (config, error) {
	c := config{routes: map[string]string{}}
	f, err := os.Open(path)
	if err != nil {
		return c, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		switch {
		case f[0] == "route" && len(f) == 3:
			c.routes[f[1]] = f[2]
			if c.first == "" {
				c.first = f[2]
			}
		case len(f) != 2:
			return c, fmt.Errorf("%s:%d: want KEY VALUE", path, n)
		case f[0] == "http":
			c.http = f[1]
		case f[0] == "https":
			c.https = f[1]
		case f[0] == "cert":
			c.cert = f[1]
		case f[0] == "key":
			c.key = f[1]
		case f[0] == "error_log":
			c.errorLog = f[1]
		default:
			return c, fmt.Errorf("%s:%d: unknown key %s", path, n, f[0])
		}
	}
	if c.http == "" || c.https == "" || c.cert == "" || c.key == "" || c.first == "" {
		return c, fmt.Errorf("%s: needs http, https, cert, key and a route", path)
	}
	return c, sc.Err()
}

func main() {
	conf := flag.String("c", "", "config file")
	pool := flag.Int("pool", 2, "idle backend connections kept per backend (MaxIdleConnsPerHost)")
	showVersion := flag.Bool("version", false, "print the version")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	c, err := readConfig(*conf)
	if err != nil {
		log.Fatal(err)
	}
	errLog := log.New(os.Stderr, "", log.LstdFlags)
	if c.errorLog != "" {
		f, err := os.OpenFile(c.errorLog, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			log.Fatal(err)
		}
		errLog = log.New(io.MultiWriter(os.Stderr, f), "", log.LstdFlags)
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: *pool,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			host, _, err := net.SplitHostPort(r.In.Host)
			if err != nil {
				host = r.In.Host
			}
			backend, ok := c.routes[host]
			if !ok {
				backend = c.first
			}
			r.Out.URL.Scheme, r.Out.URL.Host = "http", backend
			r.Out.Host = r.In.Host
			r.SetXForwarded()
		},
		Transport: tr,
		ErrorLog:  errLog,
	}
	cert, err := tls.LoadX509KeyPair(c.cert, c.key)
	if err != nil {
		log.Fatal(err)
	}
	plain := &http.Server{Addr: c.http, Handler: rp, ErrorLog: errLog, ReadHeaderTimeout: 10 * time.Second}
	secure := &http.Server{Addr: c.https, Handler: rp, ErrorLog: errLog, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}}
	done := make(chan error, 2)
	go func() { done <- plain.ListenAndServe() }()
	go func() { done <- secure.ListenAndServeTLS("", "") }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case s := <-sig:
		errLog.Printf("%v: stopping", s)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		plain.Shutdown(ctx)
		secure.Shutdown(ctx)
	case err := <-done:
		if !errors.Is(err, http.ErrServerClosed) {
			errLog.Fatal(err)
		}
	}
}
