package gen

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/quic-go/quic-go/http3"
)

// h3TestServer is a quic-go HTTP/3 server on 127.0.0.1 (UDP) with a
// certificate from a fresh local CA.
type h3TestServer struct {
	url    string // https://127.0.0.1:PORT/
	caFile string // PEM of the CA that signed the server's certificate
	port   int
	close  func() // stops the server now (also done when the test ends)
}

// startH3Server serves h over HTTP/3 until the test ends.
func startH3Server(t testing.TB, h http.Handler) *h3TestServer {
	t.Helper()
	return startH3ServerWith(t, h, nil)
}

// startH3ServerWith is startH3Server with a hook to adjust the server.
func startH3ServerWith(t testing.TB, h http.Handler, adjust func(*http3.Server)) *h3TestServer {
	t.Helper()
	s := testutil.StartH3Server(t, h, testutil.H3Options{Adjust: adjust})
	return &h3TestServer{url: s.URL, caFile: s.CA, port: s.Port, close: s.Close}
}

// fixedBody answers every request with n bytes.
func fixedBody(n int) http.Handler {
	body := testutil.Body(n)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(n))
		w.Write(body)
	})
}
