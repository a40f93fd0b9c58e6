package run

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	"github.com/loadlab/loadlab/internal/fields"
)

// ErrorClass names a kind of failed request. The names are the keys of the
// "errors" object in results.
type ErrorClass uint8

// Error classes. A request that got a complete response is never an error,
// whatever its status code (non-2xx are counted per code instead).
const (
	ClassConnectRefused ErrorClass = iota // ECONNREFUSED: nothing listening
	ClassAddrNotAvail                     // EADDRNOTAVAIL: no local port/address left
	ClassReset                            // ECONNRESET: the peer reset the connection
	ClassBrokenPipe                       // EPIPE: writing to a connection the peer closed
	ClassTimeout                          // no complete response within Spec.Timeout
	ClassParse                            // the response is not valid HTTP/1.x, or the server broke HTTP/2 (a connection error)
	ClassClosed                           // the peer closed before the response was complete
	ClassTLS                              // TLS handshake or record failure
	ClassBodyMismatch                     // body digest differs from Spec.VerifySHA256
	ClassOther                            // anything else (the first sample message says what)
	ClassDropped                          // open loop: evicted from a full pending queue, never sent
	ClassStreamReset                      // HTTP/2: the server reset the stream (RST_STREAM; its code in the sample and in h2.reset_codes)
	ClassGoAway                           // HTTP/2: the connection ended after a GOAWAY with an error code before the stream's response (the code in the sample and in h2.goaway_codes)
	ClassCalm                             // HTTP/2: the generator ended the connection with GOAWAY ENHANCE_YOUR_CALM: the server went past one of its bounds (h2.MaxQueuedControlFrames unread control frames, a header block over h2.DefaultMaxHeaderBytes)
	numErrorClasses
)

var errorClassNames = [numErrorClasses]string{
	"connect_refused", "addr_not_avail", "reset", "broken_pipe", "timeout",
	"parse", "closed", "tls", "body_mismatch", "other", "dropped",
	"stream_reset", "goaway", "h2.calm",
}

// String returns the result key of the class, e.g. "connect_refused".
func (c ErrorClass) String() string {
	if c < numErrorClasses {
		return errorClassNames[c]
	}
	return "other"
}

// explained is an error whose text already says what its cause means: it
// wraps the cause (errors.Is and errors.As find it) without repeating the
// cause's own text after it.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// Explain words err as format says, keeping err as the cause.
func Explain(err error, format string, args ...any) error {
	return &explained{msg: fmt.Sprintf(format, args...), err: err}
}

// Errors recorded for requests the generator gave up on.
var (
	ErrTimeout      = errors.New("no complete response within the timeout")
	ErrDrained      = errors.New("no complete response when the run's drain ended (one timeout after the stop)")
	ErrDropped      = errors.New("evicted unsent from the full pending queue (raise the queue bound or lower the rate)")
	ErrBodyMismatch = errors.New("response body does not match the expected SHA-256 digest")
)

// Classify maps a socket or protocol error to its class.
func Classify(err error) ErrorClass {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ECONNREFUSED:
			return ClassConnectRefused
		case syscall.EADDRNOTAVAIL:
			return ClassAddrNotAvail
		case syscall.ECONNRESET, syscall.ECONNABORTED:
			return ClassReset
		case syscall.EPIPE:
			return ClassBrokenPipe
		case syscall.ETIMEDOUT:
			return ClassTimeout
		}
		return ClassOther
	}
	switch {
	case err == ErrTimeout:
		return ClassTimeout
	case err == io.ErrUnexpectedEOF:
		return ClassClosed
	case IsTLSError(err):
		return ClassTLS
	case err == ErrBodyMismatch:
		return ClassBodyMismatch
	}
	return ClassOther
}

// IsTLSError reports errors that come from TLS itself (alerts, bad
// records, certificate verification), as opposed to the socket under it.
func IsTLSError(err error) bool {
	var ae tls.AlertError
	var rhe tls.RecordHeaderError
	var cve *tls.CertificateVerificationError
	var uae utls.AlertError
	var urhe utls.RecordHeaderError
	var ucve *utls.CertificateVerificationError
	var fde *tlsfd.Error
	return errors.As(err, &fde) || errors.As(err, &ae) || errors.As(err, &rhe) || errors.As(err, &cve) ||
		errors.As(err, &uae) || errors.As(err, &urhe) || errors.As(err, &ucve) ||
		strings.HasPrefix(err.Error(), "tls: ") || strings.HasPrefix(err.Error(), "remote error: tls")
}

// ClassifyHandshake maps a handshake's failure to its class: socket errors
// by errno, the server's FIN as closed, anything else as tls.
func ClassifyHandshake(err error) ErrorClass {
	var errno unix.Errno
	switch {
	case errors.As(err, &errno):
		return Classify(errno)
	case errors.Is(err, io.EOF):
		return ClassClosed
	}
	return ClassTLS
}

// IsTimeout reports whether err is a network timeout.
func IsTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// usage is a gen.UsageError not tied to one field.
func usage(format string, args ...any) error { return fields.Usagef(format, args...) }

// fieldErr is a gen.UsageError about field; format may name fields as
// {Field}.
func fieldErr(field, format string, args ...any) error {
	return fields.FieldErrorf(field, format, args...)
}
