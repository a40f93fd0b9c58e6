package gen

import (
	"errors"
	"io"
	"syscall"
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
	ErrTimeout                          // no complete response within --timeout
	ErrParse                            // the response is not valid HTTP/1.x, or the server broke HTTP/2 (a connection error)
	ErrClosed                           // the peer closed before the response was complete
	ErrTLS                              // TLS handshake or record failure
	ErrBodyMismatch                     // body digest differs from --verify-sha256
	ErrOther                            // anything else (the first sample message says what)
	ErrDropped                          // open loop: evicted from a full pending queue, never sent
	ErrStreamReset                      // HTTP/2: the server reset the stream (RST_STREAM; its code in the sample and in h2.reset_codes)
	ErrGoAway                           // HTTP/2: the connection ended after a GOAWAY with an error code before the stream's response (the code in the sample and in h2.goaway_codes)
	numErrorClasses
)

var errorClassNames = [numErrorClasses]string{
	"connect_refused", "addr_not_avail", "reset", "broken_pipe", "timeout",
	"parse", "closed", "tls", "body_mismatch", "other", "dropped",
	"stream_reset", "goaway",
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
	case err == errClosedEarly || err == io.ErrUnexpectedEOF:
		return ErrClosed
	case isParseError(err):
		return ErrParse
	case isTLSError(err):
		return ErrTLS
	case err == errBodyMismatch:
		return ErrBodyMismatch
	}
	return ErrOther
}

var errBodyMismatch = errors.New("response body does not match the expected SHA-256 digest")

func isParseError(err error) bool {
	switch err {
	case errStatusLine, errHeaderLine, errHeaderTooLarge, errContentLength,
		errChunkSize, errChunkTooLarge, errChunkCRLF, errChunkExt,
		errTrailingBytes, errSwitching:
		return true
	}
	return false
}
