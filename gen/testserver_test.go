package gen

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/loadlab/loadlab/gen/result"
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

// runWithin runs cfg and fails the test unless Run returns a result within
// duration + timeout + margin.
func runWithin(t *testing.T, cfg Config, margin time.Duration, obs ...Observer) *result.Result {
	t.Helper()
	start := time.Now()
	res, err := Run(context.Background(), cfg, obs...)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Run returned an error instead of a result: %v", err)
	}
	if limit := cfg.Duration + cfg.Timeout + margin; took > limit {
		t.Errorf("run took %v, more than duration + timeout + margin = %v", took, limit)
	}
	return res
}

// runLogged is runWithin with a margin for a shared machine under -race,
// and the result logged as JSON when the test failed or runs verbose.
func runLogged(t *testing.T, cfg Config, obs ...Observer) *result.Result {
	t.Helper()
	res := runWithin(t, cfg, 5*time.Second, obs...)
	if t.Failed() || testing.Verbose() {
		b, _ := json.MarshalIndent(res, "", "  ")
		t.Logf("%s", b)
	}
	return res
}
