package quic

import (
	"errors"
	"fmt"
)

// Class is the kind of a connection failure, for counting errors.
type Class uint8

// The error classes.
const (
	ClassNone Class = iota
	// ClassTLS: the TLS handshake failed on the client's side (the
	// certificate did not verify, a malformed message, ...).
	ClassTLS
	// ClassProtocol: the server broke a QUIC or HTTP/3 rule.
	ClassProtocol
	// ClassPeerClosed: the server closed the connection
	// (CONNECTION_CLOSE) before the response was complete.
	ClassPeerClosed
	// ClassVersion: the server offered only other QUIC versions.
	ClassVersion
	// ClassHandshakeTimeout: the handshake did not complete within
	// Config.HandshakeTimeout (no server, or packets lost).
	ClassHandshakeTimeout
	// ClassTimeout: the response did not complete within Config.Timeout.
	ClassTimeout
	// ClassStreamReset: the server reset the request stream.
	ClassStreamReset
	// ClassConnIDRetired: the server asked the client to retire the
	// connection ID it sends to (NEW_CONNECTION_ID with Retire Prior To
	// above 0). The client does not switch to another connection ID: it
	// closes the connection (CONNECTION_CLOSE with NO_ERROR), and a
	// request in flight fails with this class.
	ClassConnIDRetired
)

var classNames = [...]string{"none", "tls", "protocol", "peer_closed", "version_negotiation", "handshake_timeout", "timeout", "stream_reset", "conn_id_retired"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// Error is a connection failure. errors.Is(err, ErrX) holds for the
// sentinel of its Class.
type Error struct {
	Class Class
	// Code is the QUIC error code sent to the server or received from
	// it (an HTTP/3 one if App).
	Code   uint64
	App    bool
	Reason string
	Err    error // the cause, if any (e.g. a *tls13.Error)

	sentinel bool
}

func (e *Error) Error() string {
	s := "quic: " + e.Class.String()
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Code != 0 {
		s += fmt.Sprintf(" (code %#x)", e.Code)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel of e's class.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.Class == e.Class
}

// The sentinels, one per class. ErrHandshakeTimeout, ErrTimeout and
// ErrConnIDRetired are returned as they are (no allocation).
var (
	ErrTLS                = &Error{Class: ClassTLS, sentinel: true}
	ErrProtocol           = &Error{Class: ClassProtocol, sentinel: true}
	ErrPeerClosed         = &Error{Class: ClassPeerClosed, sentinel: true}
	ErrVersionNegotiation = &Error{Class: ClassVersion, Reason: "the server supports no QUIC version this client speaks (v1)", sentinel: true}
	ErrHandshakeTimeout   = &Error{Class: ClassHandshakeTimeout, Reason: "the handshake did not complete in time", sentinel: true}
	ErrTimeout            = &Error{Class: ClassTimeout, Reason: "the response did not complete in time", sentinel: true}
	ErrStreamReset        = &Error{Class: ClassStreamReset, Reason: "the server reset the request stream", sentinel: true}
	ErrConnIDRetired      = &Error{Class: ClassConnIDRetired, Reason: "the server retired the connection ID in use", sentinel: true}
)

// ClassOf returns err's class (ClassNone for nil or another error).
func ClassOf(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ClassNone
}

// QUIC transport error codes sent.
const (
	codeInternal         = 0x01
	codeFlowControl      = 0x03
	codeFrameEncoding    = 0x07
	codeTransportParam   = 0x08
	codeProtocolViolate  = 0x0a
	codeCryptoBase       = 0x100
	h3FrameError         = 0x106
	h3MessageError       = 0x10e
	h3ExcessiveLoad      = 0x107
	h3IDError            = 0x108
	h3GeneralProtocolErr = 0x101
)

func protocolError(code uint64, app bool, reason string, err error) *Error {
	return &Error{Class: ClassProtocol, Code: code, App: app, Reason: reason, Err: err}
}
