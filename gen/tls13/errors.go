package tls13

import "crypto/tls"

// Alert descriptions (RFC 8446 §6).
const (
	alertCloseNotify           = 0
	alertUnexpectedMessage     = 10
	alertBadRecordMAC          = 20
	alertRecordOverflow        = 22
	alertHandshakeFailure      = 40
	alertBadCertificate        = 42
	alertUnsupportedCert       = 43
	alertIllegalParameter      = 47
	alertDecodeError           = 50
	alertDecryptError          = 51
	alertProtocolVersion       = 70
	alertInternalError         = 80
	alertMissingExtension      = 109
	alertUnsupportedExtension  = 110
	alertNoApplicationProtocol = 120
)

// Error is a handshake failure found on this side. Its message starts with
// "tls: " and says what the server did; Alert is the alert sent to it.
type Error struct {
	Alert uint8
	msg   string
}

func (e *Error) Error() string { return e.msg }

func fail(alert uint8, msg string) *Error { return &Error{Alert: alert, msg: msg} }

// RemoteAlert is a fatal alert from the server. It unwraps to
// crypto/tls.AlertError, whose text names the alert.
type RemoteAlert struct{ Alert tls.AlertError }

func (e RemoteAlert) Error() string { return "remote error: " + e.Alert.Error() }
func (e RemoteAlert) Unwrap() error { return e.Alert }

// ErrCloseNotify reports that the server closed the connection with
// close_notify during the handshake.
var ErrCloseNotify = fail(alertCloseNotify, "tls: the server closed the connection (close_notify) during the handshake")

// alertRecord parses an alert's body (level, description).
func alertRecord(body []byte) error {
	if len(body) != 2 {
		return fail(alertDecodeError, "tls: the server sent a malformed alert")
	}
	if body[1] == alertCloseNotify {
		return ErrCloseNotify
	}
	return RemoteAlert{tls.AlertError(body[1])}
}
