package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/loadlab/loadlab/certs"
	"github.com/quic-go/quic-go/http3"
)

func TestGenHTTP3Usage(t *testing.T) {
	for _, args := range [][]string{
		{"--http3", "-d", "1s", "http://127.0.0.1:1/"},
		{"--http3", "--0rtt", "-d", "1s", "https://127.0.0.1:1/"},
		{"--0rtt", "--resume", "-d", "1s", "https://127.0.0.1:1/"},
	} {
		if code, _ := pincertsRun(t, "gen", args...); code != 2 {
			t.Errorf("gen %v: exit %d, want 2", args, code)
		}
	}
}

// TestGenHTTP3Flags runs `loadlab gen --http3 --new-conn --resume --0rtt`
// against an in-process HTTP/3 server and reads its JSON result.
func TestGenHTTP3Flags(t *testing.T) {
	dir := t.TempDir()
	paths, err := certs.Ensure(certs.Options{Dir: dir, Keys: []certs.KeyType{certs.P256}})
	if err != nil {
		t.Fatal(err)
	}
	p := paths[certs.P256]
	cert, err := tls.LoadX509KeyPair(p.FullChain, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) }),
		TLSConfig: http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}}),
	}
	go srv.Serve(udp)
	defer func() { srv.Close(); udp.Close() }()
	url := fmt.Sprintf("https://127.0.0.1:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
	out := filepath.Join(dir, "out.json")
	code, _ := pincertsRun(t, "gen", "--http3", "--new-conn", "--resume", "--0rtt", "-c", "2", "-d", "1s",
		"--ca", p.CA, "-q", "--json", out, url)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := loadResult(t, out)
	if res.Protocol != "h3" || res.QUICVersion != "v1" || res.OK == 0 || res.Handshakes != res.Requests ||
		res.TLS == nil || res.TLS.Resumed == 0 || res.TLS.ZeroRTT == 0 {
		t.Errorf("result %+v, TLS %+v", *res, res.TLS)
	}
}
