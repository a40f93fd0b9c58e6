package run

import (
	"crypto/tls"
	"io"
	"testing"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/gen/tls13"
)

// TestClassifyTLS checks the classes of what the TLS record layer
// (package tlsfd) returns: its own errors and a fatal alert are tls, FIN in
// a record closed, FIN at a record boundary (io.EOF, not an error there)
// other; a FIN during the handshake is closed.
func TestClassifyTLS(t *testing.T) {
	for _, c := range []struct {
		err  error
		want ErrorClass
	}{
		{tls13.ErrBadRecordMAC, ClassTLS},
		{tls.AlertError(40), ClassTLS},
		{&tlsfd.Error{Msg: "a record layer failure"}, ClassTLS},
		{io.ErrUnexpectedEOF, ClassClosed},
		{io.EOF, ClassOther},
	} {
		if got := Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	eof := &tlsfd.Error{Msg: "tls: the server closed the connection during the handshake: EOF", Err: io.EOF}
	if got := ClassifyHandshake(eof); got != ClassClosed {
		t.Errorf("ClassifyHandshake(%v) = %v, want closed", eof, got)
	}
	if got := ClassifyHandshake(&tlsfd.Error{Msg: "tls: x"}); got != ClassTLS {
		t.Errorf("ClassifyHandshake(tlsfd.Error) = %v, want tls", got)
	}
}
