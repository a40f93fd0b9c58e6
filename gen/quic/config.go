package quic

import (
	"crypto"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/h3"
	"github.com/loadlab/loadlab/gen/quic/internal/wire"
	"github.com/loadlab/loadlab/gen/tls13"
)

// ConnIDLen is the length of the client's source connection IDs (and of
// its first destination connection IDs).
const ConnIDLen = 8

// MinDatagram is the size the client pads datagrams with Initial packets
// to (RFC 9000 §14.1); no datagram it sends is larger.
const MinDatagram = 1200

// Config is what the connections of one run share. Set the fields, then
// call Prepare once; after that it is read-only.
type Config struct {
	// TLS is the handshake's configuration: ServerName, Verifier (nil:
	// insecure), Suites, Groups. Prepare sets its QUIC fields and ALPN
	// (h3) and prepares it.
	TLS *tls13.Config
	// Authority is the request's :authority (default: TLS.ServerName).
	Authority string
	// Path is the request's :path (default "/").
	Path string
	// Method is the request's :method (default GET). The request has no
	// body.
	Method string
	// Header is the request's other fields, in order: names as given
	// (Prepare lowercases them; Host is Authority's, and the
	// connection-specific fields HTTP/3 forbids, RFC 9114 §4.2, are
	// refused).
	Header [][2]string
	// InitialRTT is the round-trip time assumed until one is measured
	// (default 100ms). The probe timeout is 3x the RTT, doubled on each
	// expiry.
	InitialRTT time.Duration
	// HandshakeTimeout bounds the handshake (default 5s):
	// ErrHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Timeout bounds the whole connection (default 30s): ErrTimeout.
	Timeout time.Duration
	// Window is initial_max_data and initial_max_stream_data_bidi_local
	// (default 16 MiB): the most bytes of one response. The connection's
	// credit is raised (MAX_DATA) to what was received plus Window when
	// less than half of it is left, so keep-alive connections carry any
	// number of responses; a stream's is never raised (no
	// MAX_STREAM_DATA), so a response larger than Window fails
	// (ClassProtocol, FLOW_CONTROL_ERROR from the server's side).
	Window uint64
	// KeepAlive: a completed response does not close the connection;
	// Conn.Next sends the next request on it. Without it a Conn carries
	// one request and closes (CONNECTION_CLOSE) once the response is
	// complete.
	KeepAlive bool

	request []byte // stream 0: the HEADERS frame
	control []byte // stream 2: type and SETTINGS
	params  []byte // transport parameters; the SCID's bytes last
}

// Prepare checks the Config, encodes the transport parameters, the
// control stream and the request once, and prepares TLS.
func (c *Config) Prepare() error {
	if c.TLS == nil {
		return errors.New("quic: Config.TLS is nil")
	}
	if c.Authority == "" {
		c.Authority = c.TLS.ServerName
	}
	if c.Path == "" {
		c.Path = "/"
	}
	if c.InitialRTT <= 0 {
		c.InitialRTT = 100 * time.Millisecond
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 5 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Window == 0 {
		c.Window = 16 << 20
	}
	size := len(c.Authority) + len(c.Path) + len(c.Method)
	fields := make([]h3.Field, 0, len(c.Header))
	for _, f := range c.Header {
		name := strings.ToLower(f[0])
		switch name {
		case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return fmt.Errorf("quic: the request field %q is not allowed in HTTP/3 (RFC 9114 §4.2): leave it out (Authority is the host)", f[0])
		case "":
			return errors.New("quic: a request field with an empty name")
		}
		size += len(name) + len(f[1])
		fields = append(fields, h3.Field{Name: name, Value: f[1]})
	}
	if size > 1000 {
		return errors.New("quic: the request's method, authority, path and fields are longer than 1000 bytes: they must fit in one packet")
	}
	c.request = h3.AppendHeadersFrame(nil, h3.AppendRequestSection(nil, c.Method, c.Authority, c.Path, fields))
	c.control = h3.AppendControlStream(nil)
	p := wire.TransportParams{
		MaxIdleTimeout:         uint64(c.Timeout.Milliseconds()),
		MaxUDPPayloadSize:      1472,
		InitialMaxData:         c.Window,
		MaxStreamDataBidiLocal: c.Window,
		MaxStreamDataUni:       64 << 10,
		MaxStreamsUni:          16,
		DisableMigration:       true,
		InitialSCID:            make([]byte, ConnIDLen),
	}
	c.params = wire.AppendTransportParams(nil, &p)
	t := c.TLS
	t.QUIC = true
	t.ALPN = []string{"h3"}
	t.QUICTransportParams = c.params
	return t.Prepare()
}

// Client is one event loop's state shared by its Conns: the TLS client
// (key shares, verifier scratch) and key derivation. Not safe for
// concurrent use.
type Client struct {
	cfg    *Config
	tls    *tls13.Client
	kdf256 tls13.KDF
	kdf384 tls13.KDF
}

// NewClient returns a Client for cfg, which must be prepared.
func NewClient(cfg *Config) (*Client, error) {
	if cfg.request == nil {
		return nil, errors.New("quic: NewClient with a Config that was not prepared")
	}
	t, err := tls13.NewClient(cfg.TLS)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, tls: t, kdf256: tls13.NewKDF(crypto.SHA256), kdf384: tls13.NewKDF(crypto.SHA384)}, nil
}

func (cl *Client) kdf(s *tls13.Suite) tls13.KDF {
	if s.Hash == crypto.SHA384 {
		return cl.kdf384
	}
	return cl.kdf256
}

// Tag returns the Conn.Tag in a destination connection ID from a server
// (DestConnID): its first two bytes, big-endian (0 if shorter).
func Tag(dcid []byte) uint16 {
	if len(dcid) < 2 {
		return 0
	}
	return uint16(dcid[0])<<8 | uint16(dcid[1])
}

// TagOf returns the Conn.Tag of the connection a datagram from a server
// is for, from the destination connection ID of its first packet (no
// header parsing beyond that); false if the datagram is too short or its
// connection ID is not ConnIDLen bytes long. The caller must still
// compare the whole ID (DestConnID) with its Conn's SCID: a tag is not
// authenticated and may collide.
func TagOf(datagram []byte) (uint16, bool) {
	d := datagram
	switch {
	case len(d) == 0:
		return 0, false
	case d[0]&0x80 == 0: // short header: the DCID follows the first byte
		if len(d) < 1+ConnIDLen {
			return 0, false
		}
		return uint16(d[1])<<8 | uint16(d[2]), true
	case len(d) >= 6+ConnIDLen && d[5] == ConnIDLen: // long header
		return uint16(d[6])<<8 | uint16(d[7]), true
	}
	return 0, false
}

// DestConnID returns the destination connection ID of the first packet in
// a datagram from a server: the SCID of the client's Conn it is for (nil
// if the datagram is too short to tell).
func DestConnID(datagram []byte) []byte {
	h, err := wire.ParseHeader(datagram, ConnIDLen)
	if err != nil || len(h.DCID) != ConnIDLen {
		return nil
	}
	return h.DCID
}

// SetKeepLeaf makes the Client's handshakes keep the server's leaf
// certificate (tls13.Handshake.Leaf), e.g. until its key type is noted.
func (cl *Client) SetKeepLeaf(on bool) { cl.tls.KeepLeaf = on }

// RequestBytes is the size of the request each connection sends: its
// HEADERS frame (the QUIC and TLS framing around it not counted).
func (c *Config) RequestBytes() int { return len(c.request) }
