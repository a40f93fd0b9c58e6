package tls13

import (
	"golang.org/x/crypto/cryptobyte"
)

// Parsers of the server's handshake messages. Each takes the message body
// (after the 4-byte type and length header) and returns slices of it; none
// allocates. A parse failure is an *Error with alert decode_error (or the
// alert RFC 8446 names) and a message that says what was wrong.

// Handshake message types (RFC 8446 §4).
const (
	typeClientHello         = 1
	typeServerHello         = 2
	typeNewSessionTicket    = 4
	typeEncryptedExtensions = 8
	typeCertificate         = 11
	typeCertificateRequest  = 13
	typeCertificateVerify   = 15
	typeFinished            = 20
	typeKeyUpdate           = 24
	typeMessageHash         = 254
)

// Extension types used here.
const (
	extServerName          = 0
	extSupportedGroups     = 10
	extSignatureAlgorithms = 13
	extALPN                = 16
	extPreSharedKey        = 41
	extEarlyData           = 42
	extSupportedVersions   = 43
	extCookie              = 44
	extKeyShare            = 51
	extQUICTransportParams = 57
)

const versionTLS13 = 0x0304

// helloRetryRequestRandom is the ServerHello random that marks a
// HelloRetryRequest (RFC 8446 §4.1.3).
var helloRetryRequestRandom = [32]byte{
	0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
	0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
}

// serverHello is a parsed ServerHello or HelloRetryRequest.
type serverHello struct {
	hrr          bool
	legacyVers   uint16
	sessionID    []byte
	suite        uint16
	compression  uint8
	version      uint16 // supported_versions; 0 if absent
	group        Group  // key_share: the server's share's group, or the HRR's selected group
	share        []byte // key_share: the server's share (not in a HRR)
	cookie       []byte // HRR only
	hasKeyShare  bool
	preSharedKey bool
}

var (
	errBadServerHello   = fail(alertDecodeError, "tls: malformed ServerHello")
	errBadHelloExt      = fail(alertDecodeError, "tls: malformed ServerHello extension")
	errDupExtension     = fail(alertIllegalParameter, "tls: the server sent an extension twice")
	errBadEE            = fail(alertDecodeError, "tls: malformed EncryptedExtensions")
	errBadALPN          = fail(alertDecodeError, "tls: malformed ALPN extension in EncryptedExtensions")
	errBadCertificate   = fail(alertDecodeError, "tls: malformed Certificate message")
	errBadCertReq       = fail(alertDecodeError, "tls: malformed CertificateRequest")
	errBadCertVerify    = fail(alertDecodeError, "tls: malformed CertificateVerify")
	errBadFinished      = fail(alertDecodeError, "tls: malformed Finished (wrong length)")
	errUnexpectedExtSH  = fail(alertUnsupportedExtension, "tls: the server sent a ServerHello extension the client did not offer")
	errUnexpectedExtEE  = fail(alertUnsupportedExtension, "tls: the server sent an EncryptedExtensions extension the client did not offer or that is forbidden there")
	errTooManyCerts     = fail(alertBadCertificate, "tls: the server's certificate chain is longer than 16 certificates")
	errEmptyCertificate = fail(alertDecodeError, "tls: the server sent an empty Certificate message")
)

// seen tracks extensions already met in one message (types below 64).
type seen uint64

func (s *seen) add(ext uint16) bool {
	if ext >= 64 {
		return true // unknown types are not tracked
	}
	if *s&(1<<ext) != 0 {
		return false
	}
	*s |= 1 << ext
	return true
}

// parseServerHello parses a ServerHello or HelloRetryRequest body.
func parseServerHello(body []byte) (serverHello, error) {
	var sh serverHello
	s := cryptobyte.String(body)
	var random []byte
	var sid cryptobyte.String
	if !s.ReadUint16(&sh.legacyVers) || !s.ReadBytes(&random, 32) ||
		!s.ReadUint8LengthPrefixed(&sid) || len(sid) > 32 ||
		!s.ReadUint16(&sh.suite) || !s.ReadUint8(&sh.compression) {
		return sh, errBadServerHello
	}
	sh.sessionID = sid
	sh.hrr = [32]byte(random) == helloRetryRequestRandom
	if s.Empty() {
		return sh, nil // no extensions: a TLS 1.2 (or older) ServerHello
	}
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) || !s.Empty() {
		return sh, errBadServerHello
	}
	var dup seen
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return sh, errBadServerHello
		}
		if !dup.add(typ) {
			return sh, errDupExtension
		}
		switch typ {
		case extSupportedVersions:
			if !data.ReadUint16(&sh.version) || !data.Empty() {
				return sh, errBadHelloExt
			}
		case extKeyShare:
			sh.hasKeyShare = true
			var g uint16
			if !data.ReadUint16(&g) {
				return sh, errBadHelloExt
			}
			sh.group = Group(g)
			if sh.hrr {
				if !data.Empty() {
					return sh, errBadHelloExt
				}
				continue
			}
			var share cryptobyte.String
			if !data.ReadUint16LengthPrefixed(&share) || len(share) == 0 || !data.Empty() {
				return sh, errBadHelloExt
			}
			sh.share = share
		case extCookie:
			var cookie cryptobyte.String
			if !sh.hrr {
				return sh, errUnexpectedExtSH
			}
			if !data.ReadUint16LengthPrefixed(&cookie) || len(cookie) == 0 || !data.Empty() {
				return sh, errBadHelloExt
			}
			sh.cookie = cookie
		case extPreSharedKey:
			sh.preSharedKey = true
		default:
			return sh, errUnexpectedExtSH
		}
	}
	return sh, nil
}

// encryptedExtensions is what the client needs of EncryptedExtensions.
type encryptedExtensions struct {
	alpn          []byte // the protocol the server selected, or nil
	quicParams    []byte // quic_transport_parameters
	hasQUICParams bool
}

// parseEncryptedExtensions parses an EncryptedExtensions body. Extensions
// this client does not know are skipped; ones that RFC 8446 forbids here,
// or that answer an offer the client did not make, are refused.
func parseEncryptedExtensions(body []byte) (encryptedExtensions, error) {
	var ee encryptedExtensions
	s := cryptobyte.String(body)
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) || !s.Empty() {
		return ee, errBadEE
	}
	var dup seen
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return ee, errBadEE
		}
		if !dup.add(typ) {
			return ee, errDupExtension
		}
		switch typ {
		case extALPN:
			var list, proto cryptobyte.String
			if !data.ReadUint16LengthPrefixed(&list) || !data.Empty() ||
				!list.ReadUint8LengthPrefixed(&proto) || len(proto) == 0 || !list.Empty() {
				return ee, errBadALPN
			}
			ee.alpn = proto
		case extQUICTransportParams:
			ee.quicParams, ee.hasQUICParams = data, true
		case extServerName:
			if !data.Empty() { // the server's acknowledgement is empty
				return ee, errBadEE
			}
		case extEarlyData, extKeyShare, extSupportedVersions, extPreSharedKey, extCookie, extSignatureAlgorithms:
			return ee, errUnexpectedExtEE
		}
	}
	return ee, nil
}

// maxChain bounds the certificates of one chain.
const maxChain = 16

// parseCertificate parses a Certificate body: it returns the request
// context and appends each certificate's DER, leaf first, to chain.
func parseCertificate(body []byte, chain [][]byte) (context []byte, out [][]byte, err error) {
	s := cryptobyte.String(body)
	var ctx, list cryptobyte.String
	if !s.ReadUint8LengthPrefixed(&ctx) || !s.ReadUint24LengthPrefixed(&list) || !s.Empty() {
		return nil, chain, errBadCertificate
	}
	for !list.Empty() {
		var der, exts cryptobyte.String
		if !list.ReadUint24LengthPrefixed(&der) || len(der) == 0 || !list.ReadUint16LengthPrefixed(&exts) {
			return nil, chain, errBadCertificate
		}
		// Entry extensions (OCSP staple, SCTs) are not needed here; check
		// only that they are well-formed.
		for !exts.Empty() {
			var typ uint16
			var data cryptobyte.String
			if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
				return nil, chain, errBadCertificate
			}
		}
		if len(chain) == maxChain {
			return nil, chain, errTooManyCerts
		}
		chain = append(chain, der)
	}
	if len(chain) == 0 {
		return nil, chain, errEmptyCertificate
	}
	return ctx, chain, nil
}

// parseCertificateRequest parses a CertificateRequest body and returns its
// context (the extensions, which say what the server would accept, are
// not needed: the client answers with no certificate).
func parseCertificateRequest(body []byte) ([]byte, error) {
	s := cryptobyte.String(body)
	var ctx, exts cryptobyte.String
	if !s.ReadUint8LengthPrefixed(&ctx) || !s.ReadUint16LengthPrefixed(&exts) || !s.Empty() {
		return nil, errBadCertReq
	}
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return nil, errBadCertReq
		}
	}
	return ctx, nil
}

// parseCertificateVerify parses a CertificateVerify body.
func parseCertificateVerify(body []byte) (scheme uint16, sig []byte, err error) {
	s := cryptobyte.String(body)
	var sg cryptobyte.String
	if !s.ReadUint16(&scheme) || !s.ReadUint16LengthPrefixed(&sg) || len(sg) == 0 || !s.Empty() {
		return 0, nil, errBadCertVerify
	}
	return scheme, sg, nil
}

// parseFinished checks a Finished body's length against the suite's hash.
func parseFinished(body []byte, hashLen int) ([]byte, error) {
	if len(body) != hashLen {
		return nil, errBadFinished
	}
	return body, nil
}
