package main

import (
	"github.com/loadlab/loadlab/internal/testutil"
	"net/http"
	"path/filepath"
	"testing"
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
	srv := testutil.StartH3Server(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("hello")) }), testutil.H3Options{})
	out := filepath.Join(dir, "out.json")
	code, _ := pincertsRun(t, "gen", "--http3", "--new-conn", "--resume", "--0rtt", "-c", "2", "-d", "1s",
		"--ca", srv.CA, "-q", "--json", out, srv.URL)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	res := loadResult(t, out)
	if res.Protocol != "h3" || res.QUICVersion != "v1" || res.OK == 0 || res.Handshakes != res.Requests ||
		res.TLS == nil || res.TLS.Resumed == 0 || res.TLS.ZeroRTT == 0 {
		t.Errorf("result %+v, TLS %+v", *res, res.TLS)
	}
}
