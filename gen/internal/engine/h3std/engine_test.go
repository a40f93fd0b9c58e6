package h3std

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/quic-go/quic-go"

	"github.com/loadlab/loadlab/gen/internal/run"
)

func TestClassifyH3(t *testing.T) {
	cases := []struct {
		err  error
		want run.ErrorClass
		keep bool // the error itself is the sample (else a fixed message)
	}{
		{&quic.TransportError{ErrorCode: 0x12a, ErrorMessage: "tls: failed to verify certificate: x509: certificate signed by unknown authority"}, run.ClassTLS, true},
		{fmt.Errorf("wrapped: %w", &quic.TransportError{ErrorCode: 0x128, Remote: true}), run.ClassTLS, true},
		{errors.New("tls: handshake failure"), run.ClassTLS, true},
		{errNoHandshake, run.ClassTimeout, true},
		{&quic.IdleTimeoutError{}, run.ClassTimeout, true},
		{context.DeadlineExceeded, run.ClassTimeout, false},
		{os.ErrDeadlineExceeded, run.ClassTimeout, false},
		{&quic.StatelessResetError{}, run.ClassReset, true},
		{&quic.StreamError{StreamID: 4, ErrorCode: 0x10c, Remote: true}, run.ClassReset, true},
		{&quic.ApplicationError{ErrorCode: 0x100, Remote: true}, run.ClassClosed, true},
		{&quic.TransportError{ErrorCode: quic.ProtocolViolation, Remote: true}, run.ClassClosed, true},
		{io.ErrUnexpectedEOF, run.ClassClosed, true},
		{errors.New("http3: invalid response: bad status"), run.ClassParse, true},
		{errors.New("http3: parsing frame failed: frame too large"), run.ClassParse, true},
		{run.ErrBodyMismatch, run.ClassBodyMismatch, true},
		{fmt.Errorf("write: %w", syscall.ECONNREFUSED), run.ClassConnectRefused, true},
		{&quic.StreamError{StreamID: 4, ErrorCode: 0x10c}, run.ClassOther, true}, // our own cancel
		{errors.New("something new"), run.ClassOther, true},
	}
	for _, tc := range cases {
		got, sample := classify(tc.err)
		if got != tc.want {
			t.Errorf("%T %v: class %v, want %v", tc.err, tc.err, got, tc.want)
		}
		if tc.keep && sample != tc.err {
			t.Errorf("%v: sample %v, want the error itself", tc.err, sample)
		}
		if !tc.keep && sample != run.ErrTimeout {
			t.Errorf("%v: sample %v, want %v", tc.err, sample, run.ErrTimeout)
		}
	}
}
