package gen

import (
	"crypto/tls"
	"net"
	"testing"

	"github.com/loadlab/loadlab/internal/testutil"
)

// The misbehaving-server tests run against internal/testutil's raw TCP
// (or TLS) server; these names keep them short.

// testServer is a started testutil.Server.
type testServer struct{ *testutil.Server }

// url returns scheme://127.0.0.1:port/x.
func (s *testServer) url(scheme string) string { return s.URL(scheme) }

// startServer starts a plain TCP test server.
func startServer(t testing.TB, handle func(net.Conn)) *testServer {
	t.Helper()
	return &testServer{testutil.StartServer(t, handle)}
}

// startServerTLS starts a test server that wraps each connection in
// tls.Server(cfg) when cfg is not nil.
func startServerTLS(t testing.TB, cfg *tls.Config, handle func(net.Conn)) *testServer {
	t.Helper()
	return &testServer{testutil.StartServerTLS(t, cfg, handle)}
}

// The handlers (see internal/testutil).
var (
	readRequest    = testutil.ReadRequest
	eachRequest    = testutil.EachRequest
	reply          = testutil.Reply
	replyThenHold  = testutil.ReplyThenHold
	replyThenClose = testutil.ReplyThenClose
	answerAnything = testutil.AnswerAnything
	holdForever    = testutil.HoldForever
	resetOnAccept  = testutil.ResetOnAccept
	drip           = testutil.Drip
	tlsHandshake   = testutil.TLSHandshake
)
