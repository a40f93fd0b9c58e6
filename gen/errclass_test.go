package gen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadlab/loadlab/internal/testutil"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/tls13"

	"github.com/loadlab/loadlab/gen/h1"
)

// TestClassifyH1 checks that the HTTP/1 parser's errors land in their
// classes: a response cut short is closed, a malformed one parse.
func TestClassifyH1(t *testing.T) {
	if c := classify(h1.ErrClosedEarly); c != ErrClosed {
		t.Errorf("h1.ErrClosedEarly classifies as %v, want closed", c)
	}
	var p h1.Parser
	_, _, err := p.Feed([]byte("garbage\r\n\r\n"))
	if c := classify(err); err == nil || c != ErrParse {
		t.Errorf("a malformed status line (%v) classifies as %v, want parse", err, c)
	}
}

// TestClassifyTLS checks the classes of what the TLS record layer
// (package tlsfd) returns: its own errors and a fatal alert are tls, FIN in
// a record closed, FIN at a record boundary (io.EOF, not an error there)
// other; a FIN during the handshake is closed.
func TestClassifyTLS(t *testing.T) {
	for _, c := range []struct {
		err  error
		want ErrorClass
	}{
		{tls13.ErrBadRecordMAC, ErrTLS},
		{tls.AlertError(40), ErrTLS},
		{&tlsfd.Error{Msg: "a record layer failure"}, ErrTLS},
		{io.ErrUnexpectedEOF, ErrClosed},
		{io.EOF, ErrOther},
	} {
		if got := classify(c.err); got != c.want {
			t.Errorf("classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	eof := &tlsfd.Error{Msg: "tls: the server closed the connection during the handshake: EOF", Err: io.EOF}
	if got := classifyHandshake(eof); got != ErrClosed {
		t.Errorf("classifyHandshake(%v) = %v, want closed", eof, got)
	}
	if got := classifyHandshake(&tlsfd.Error{Msg: "tls: x"}); got != ErrTLS {
		t.Errorf("classifyHandshake(tlsfd.Error) = %v, want tls", got)
	}
}

// A run against a port where nothing listens fails before it starts with
// one line that names the cause once (it used to end with the errno's
// text again) and still wraps it.
func TestRefusedSaysItOnce(t *testing.T) {
	cfg := Config{URL: fmt.Sprintf("http://127.0.0.1:%d/", testutil.RefusedPort(t)), Duration: time.Second}
	_, err := Run(context.Background(), cfg)
	if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || strings.Count(err.Error(), "connection refused") != 1 {
		t.Fatalf("err %v: want ECONNREFUSED, named once", err)
	}
}
