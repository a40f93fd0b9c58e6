package gen

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"

	"github.com/quic-go/quic-go"
	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/h1"
)

// ErrorClass names a kind of failed request. The names are the keys of the
// "errors" object in results.
type ErrorClass uint8

// Error classes. A request that got a complete response is never an error,
// whatever its status code (non-2xx are counted per code instead).
const (
	ErrConnectRefused ErrorClass = iota // ECONNREFUSED: nothing listening
	ErrAddrNotAvail                     // EADDRNOTAVAIL: no local port/address left
	ErrReset                            // ECONNRESET: the peer reset the connection
	ErrBrokenPipe                       // EPIPE: writing to a connection the peer closed
	ErrTimeout                          // no complete response within Config.Timeout
	ErrParse                            // the response is not valid HTTP/1.x, or the server broke HTTP/2 (a connection error)
	ErrClosed                           // the peer closed before the response was complete
	ErrTLS                              // TLS handshake or record failure
	ErrBodyMismatch                     // body digest differs from Config.VerifySHA256
	ErrOther                            // anything else (the first sample message says what)
	ErrDropped                          // open loop: evicted from a full pending queue, never sent
	ErrStreamReset                      // HTTP/2: the server reset the stream (RST_STREAM; its code in the sample and in h2.reset_codes)
	ErrGoAway                           // HTTP/2: the connection ended after a GOAWAY with an error code before the stream's response (the code in the sample and in h2.goaway_codes)
	ErrCalm                             // HTTP/2: the generator ended the connection with GOAWAY ENHANCE_YOUR_CALM: the server went past one of its bounds (h2.MaxQueuedControlFrames unread control frames, a header block over h2.DefaultMaxHeaderBytes)
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

// ErrorClasses lists every class name, in a stable order.
func ErrorClasses() []string { return errorClassNames[:] }

// explained is an error whose text already says what its cause means: it
// wraps the cause (errors.Is and errors.As find it) without repeating the
// cause's own text after it.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// explain words err as format says, keeping err as the cause.
func explain(err error, format string, args ...any) error {
	return &explained{msg: fmt.Sprintf(format, args...), err: err}
}

// Errors recorded for requests the generator gave up on.
var (
	errTimeout = errors.New("no complete response within the timeout")
	errDrained = errors.New("no complete response when the run's drain ended (one timeout after the stop)")
	errDropped = errors.New("evicted unsent from the full pending queue (raise the queue bound or lower the rate)")
)

// classify maps a socket or protocol error to its class.
func classify(err error) ErrorClass {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ECONNREFUSED:
			return ErrConnectRefused
		case syscall.EADDRNOTAVAIL:
			return ErrAddrNotAvail
		case syscall.ECONNRESET, syscall.ECONNABORTED:
			return ErrReset
		case syscall.EPIPE:
			return ErrBrokenPipe
		case syscall.ETIMEDOUT:
			return ErrTimeout
		}
		return ErrOther
	}
	switch {
	case err == errTimeout:
		return ErrTimeout
	case err == h1.ErrClosedEarly || err == io.ErrUnexpectedEOF:
		return ErrClosed
	case h1.IsParseError(err):
		return ErrParse
	case isTLSError(err):
		return ErrTLS
	case err == errBodyMismatch:
		return ErrBodyMismatch
	}
	return ErrOther
}

var errBodyMismatch = errors.New("response body does not match the expected SHA-256 digest")

// isTLSError reports errors that come from TLS itself (alerts, bad records,
// certificate verification), as opposed to the socket under it.
func isTLSError(err error) bool {
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

// classifyHandshake maps a handshake's failure to its class: socket errors
// by errno, the server's FIN as closed, anything else as tls.
func classifyHandshake(err error) ErrorClass {
	var errno unix.Errno
	switch {
	case errors.As(err, &errno):
		return classify(errno)
	case errors.Is(err, io.EOF):
		return ErrClosed
	}
	return ErrTLS
}

var (
	// errNoHandshake is recorded for dials that got no QUIC handshake in
	// time: nothing answers on the UDP port, or packets are lost.
	errNoHandshake = errors.New("no QUIC handshake within the timeout: is an HTTP/3 server listening on that UDP port?")
	errRunEnded    = errors.New("the run ended during the handshake")
)

// h3ParseErrors are the texts of http3's errors about a malformed response.
var h3ParseErrors = []string{
	"http3: invalid response",
	"http3: parsing frame failed",
	"http3: expected first frame to be a HEADERS frame",
	"http3: HEADERS frame too large",
	"http3: failed to read response headers",
	"http3: too many 1xx informational responses",
	"peer sent too much data",
}

// classifyH3 maps an HTTP/3 or QUIC error to its class, and returns the
// error to keep as the class's sample message.
func classifyH3(err error) (ErrorClass, error) {
	var (
		te  *quic.TransportError
		ae  *quic.ApplicationError
		se  *quic.StreamError
		sre *quic.StatelessResetError
		ite *quic.IdleTimeoutError
	)
	switch {
	case err == errBodyMismatch:
		return ErrBodyMismatch, err
	case errors.As(err, &te) && te.ErrorCode.IsCryptoError():
		// TLS inside QUIC: certificate verification, alerts.
		return ErrTLS, err
	case isTLSError(err):
		return ErrTLS, err
	case err == errNoHandshake || errors.As(err, &ite):
		return ErrTimeout, err
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return ErrTimeout, errTimeout
	case errors.As(err, &sre):
		return ErrReset, err
	case errors.As(err, &se) && se.Remote:
		return ErrReset, err // the server reset the request stream
	case errors.As(err, &ae) && ae.Remote, errors.As(err, &te) && te.Remote:
		return ErrClosed, err // the server closed the connection
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ErrClosed, err
	}
	msg := err.Error()
	for _, p := range h3ParseErrors {
		if strings.Contains(msg, p) {
			return ErrParse, err
		}
	}
	return classify(err), err
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
