package gen

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/quic-go/quic-go"
)

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
