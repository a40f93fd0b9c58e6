package gen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestHTTP1ResultAssembly runs the HTTP/1.1 engine through the result
// assembly it now shares with HTTP/3: protocol, per-loop busy, no QUIC
// fields.
func TestHTTP1ResultAssembly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Config{URL: srv.URL + "/", Connections: 2, Duration: 700 * time.Millisecond, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.Protocol != "http/1.1" || res.QUICVersion != "" || res.TLS != nil {
		t.Errorf("protocol %q quic %q tls %+v", res.Protocol, res.QUICVersion, res.TLS)
	}
	if res.OK == 0 || res.Requests != res.OK || res.BytesRead <= 5*res.OK {
		t.Errorf("ok %d requests %d bytes %d", res.OK, res.Requests, res.BytesRead)
	}
	g := res.Generator
	if g.Loops < 1 || len(g.Busy) != g.Loops || len(g.CPUs) != g.Loops || len(g.CPUSeconds) != g.Loops {
		t.Errorf("generator %+v", g)
	}
}
