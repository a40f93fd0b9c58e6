package quic

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"time"

	"github.com/loadlab/loadlab/gen/quic/internal/h3"
	"github.com/loadlab/loadlab/gen/quic/internal/wire"
	"github.com/loadlab/loadlab/gen/tls13"
)

// Encryption levels (packet number spaces).
const (
	lvlInitial = iota
	lvlHandshake
	lvlApp
)

// ackDelay is how long the client holds an ACK of a single 1-RTT packet
// (below the default max_ack_delay of 25ms).
const ackDelay = 20 * time.Millisecond

// Stream IDs the client uses: the control stream; requests go on 0, 4,
// 8, ...
const (
	streamControl = 2
)

// maxUniStreams is the initial_max_streams_uni the client advertises
// (the server's control and QPACK streams, and room for more), and
// uniWindow each one's initial_max_stream_data_uni.
const (
	maxUniStreams = 16
	uniWindow     = 64 << 10
)

// MaxPackets is how many 1-RTT packets a connection sends before
// Reusable reports false: far below the AEAD confidentiality limit of
// RFC 9001 §6.6 (2^23 packets for AES-GCM), since the client does not
// start key updates of its own; the caller opens a new connection.
const MaxPackets = 1 << 20

type level struct {
	seal, open wire.Keys
	nextPN     uint64
	acks       ackState
}

// Conn is one QUIC connection carrying one HTTP/3 request, or with
// Config.KeepAlive one request after another (Next). Its zero value is
// ready for Start; after it is closed it may be started again, reusing
// its buffers. Not safe for concurrent use: one goroutine (one event
// loop) calls all of its methods.
type Conn struct {
	// Body, if set, receives the response body's bytes as they arrive
	// (e.g. a hash.Hash); set it before Start.
	Body io.Writer
	// Tag is put, big-endian, in the first two bytes of the SCID by
	// Start (the other six are random), so that an event loop can find
	// the Conn of a datagram with TagOf (or Tag) without a map; it must
	// still check the whole SCID. Set it before Start.
	Tag uint16

	cl *Client
	hs tls13.Handshake

	lv [3]level

	ids     [2 * ConnIDLen]byte // the first DCID, then the SCID
	odcid   []byte              // the first DCID (slice of ids)
	scid    []byte
	dcid    [wire.MaxConnIDLen]byte
	dcidLen int
	token   []byte
	retry   [wire.MaxConnIDLen]byte // the Retry's SCID
	retryN  int

	retried    bool // a Retry was followed
	gotServer  bool // a packet from the server was authenticated
	confirmed  bool // HANDSHAKE_DONE or a 1-RTT ACK
	reqAcked   bool // the request reached the server
	closed     bool
	closeQueue bool // send CONNECTION_CLOSE (app, H3_NO_ERROR) next

	crypto     [2]reasm  // the server's CRYPTO stream, Initial and Handshake
	sent       [2][]byte // the client's CRYPTO stream, Initial and Handshake
	sendCrypto [2]bool   // (re)send sent[level] from offset 0
	sendPing   bool      // a Handshake PING (anti-deadlock PTO)
	sendReq    bool      // (re)send the control stream and the request
	reqPN      uint64    // the 1-RTT packet that carried the request

	stream  reasm
	resp    h3.Response
	finSeen bool

	// Keep-alive (Config.KeepAlive): the requests on this connection.
	keepAlive   bool
	done        bool   // the current request's response is complete
	requests    int    // responses completed
	reqID       uint64 // the current request's stream (0, 4, 8, ...)
	curOpen     bool   // reqID is open for the current request (not queued)
	reqQueued   bool   // Next waits for stream or flow-control credit
	reqSent     bool   // the current request went out at least once
	ackNow      bool   // send a pending ACK with the next flush (a queued request)
	reqCtrl     bool   // the request's last packet carried the control stream
	ctrlAcked   bool   // the control stream reached the server
	opened      uint64 // bidirectional streams opened
	peerStreams uint64 // the server's limit on them (initial_max_streams_bidi, MAX_STREAMS)
	peerData    uint64 // the server's connection credit (initial_max_data, MAX_DATA)
	sentData    uint64 // bytes sent on the client's streams (first sends)
	largestAck  int64  // the largest 1-RTT packet number the server acknowledged

	// Receive-side flow control: bytes received (highest offsets) on
	// every stream against what was advertised.
	recvData    uint64
	recvMax     uint64 // the MAX_DATA limit advertised (first: Config.Window)
	streamHigh  uint64 // the highest offset on the current request stream
	uniHigh     [maxUniStreams]uint64
	sendMaxData bool   // a MAX_DATA is due
	maxDataOut  bool   // a MAX_DATA was sent and not yet acknowledged
	maxDataPN   uint64 // the last packet that carried it

	ctl      reasm      // the server's first unidirectional stream (3)
	ctlParse h3.Control // its frames: GOAWAY
	lastRecv time.Time  // the last packet from the server that was processed

	start, doneAt time.Time
	hsDeadline    time.Time
	deadline      time.Time
	ptoAt         time.Time
	ackAt         time.Time
	rtt           time.Duration
	ptoCount      int
	initialSentAt time.Time

	// 1-RTT key updates (RFC 9001 §6), which the server may start (quic-go
	// does after 100 packets).
	phase      bool // the current key phase
	cSecret    [64]byte
	sSecret    [64]byte
	nsecret    int
	next       wire.Keys // the server's keys of the next phase, tried
	keyUpdates int       // key updates followed
	tmp        [64]byte

	peer    wire.TransportParams
	tlsOut  []byte
	scratch []byte
	err     error
	closeAs *Error // the error to send in CONNECTION_CLOSE
}

// Start begins a connection for cl at now and appends the first datagram
// (the client's Initial, padded to MinDatagram) to out.
func (c *Conn) Start(cl *Client, now time.Time, out []byte) ([]byte, error) {
	cfg := cl.cfg
	c.cl = cl
	for i := range c.lv {
		c.lv[i].seal.Drop()
		c.lv[i].open.Drop()
		c.lv[i].nextPN = 0
		c.lv[i].acks.reset()
	}
	c.retried, c.gotServer, c.confirmed, c.reqAcked, c.closed, c.closeQueue = false, false, false, false, false, false
	c.sendCrypto, c.sendPing, c.sendReq, c.finSeen = [2]bool{}, false, false, false
	c.retryN, c.token, c.err, c.closeAs = 0, c.token[:0], nil, nil
	c.crypto[0].reset()
	c.crypto[1].reset()
	c.crypto[0].crypt, c.crypto[1].crypt = true, true
	c.stream.reset()
	c.resp.Reset()
	c.resp.Body = c.Body
	c.start, c.doneAt = now, time.Time{}
	c.hsDeadline = now.Add(cfg.HandshakeTimeout)
	c.deadline = now.Add(cfg.Timeout)
	c.ptoAt, c.ackAt = time.Time{}, time.Time{}
	c.rtt, c.ptoCount = cfg.InitialRTT, 0
	c.keepAlive, c.done, c.requests = cfg.KeepAlive, false, 0
	c.reqID, c.curOpen, c.reqQueued, c.reqSent, c.ackNow = 0, true, false, false, false
	c.reqCtrl, c.ctrlAcked, c.opened = false, false, 1
	c.peerStreams, c.peerData, c.sentData, c.largestAck = 0, 0, 0, -1
	c.recvData, c.recvMax, c.streamHigh, c.uniHigh = 0, cfg.Window, 0, [maxUniStreams]uint64{}
	c.sendMaxData, c.maxDataOut = false, false
	c.ctl.reset()
	c.ctlParse.Reset()
	c.lastRecv = now
	if _, err := rand.Read(c.ids[:]); err != nil {
		c.closeErr(&Error{Class: ClassTLS, Reason: "no randomness", Err: err})
		return out, c.err
	}
	c.ids[ConnIDLen], c.ids[ConnIDLen+1] = byte(c.Tag>>8), byte(c.Tag)
	c.odcid, c.scid = c.ids[:ConnIDLen], c.ids[ConnIDLen:]
	c.dcidLen = copy(c.dcid[:], c.odcid)
	if err := wire.SetInitialKeys(cl.kdf256, c.odcid, &c.lv[lvlInitial].seal, &c.lv[lvlInitial].open); err != nil {
		c.closeErr(&Error{Class: ClassTLS, Reason: "initial keys", Err: err})
		return out, c.err
	}
	c.scratch = append(c.scratch[:0], cfg.params...)
	copy(c.scratch[len(c.scratch)-ConnIDLen:], c.scid)
	var err error
	c.sent[0], err = c.hs.StartQUIC(cl.tls, c.scratch, c.sent[0][:0])
	if err != nil {
		c.closeErr(&Error{Class: ClassTLS, Err: err})
		return out, c.err
	}
	c.sent[1] = c.sent[1][:0]
	c.sendCrypto[0] = true
	return c.flush(now, out), nil
}

// SCID returns the connection's source connection ID, which the server's
// packets carry as their destination (see DestConnID). Valid until the
// next Start.
func (c *Conn) SCID() []byte { return c.scid }

// HandshakeDone reports when the handshake completed (the server's
// Finished verified), or false.
func (c *Conn) HandshakeDone() (time.Time, bool) { return c.doneAt, !c.doneAt.IsZero() }

// Status returns the response's status, 0 until its HEADERS.
func (c *Conn) Status() int { return c.resp.Status }

// BodyBytes returns the response body bytes received so far.
func (c *Conn) BodyBytes() int64 { return c.resp.Bytes }

// Closed reports that the connection is over: the response completed
// without Config.KeepAlive (Err is nil), Close was called (Err is nil),
// or it failed (Err says why).
func (c *Conn) Closed() bool { return c.closed }

// Done reports that the current request's response is complete: its
// status and every body byte received, the stream's FIN seen. Without
// Config.KeepAlive the connection is then closed; with it, it stays open
// for Next.
func (c *Conn) Done() bool { return c.done }

// Requests returns how many responses completed on this connection.
func (c *Conn) Requests() int { return c.requests }

// Err returns the connection's failure, or nil.
func (c *Conn) Err() error { return c.err }

// ErrClass returns the class of Err (ClassNone if nil).
func (c *Conn) ErrClass() Class { return ClassOf(c.err) }

// Handshake returns the TLS handshake, for its negotiated suite, group,
// ALPN and peer key.
func (c *Conn) Handshake() *tls13.Handshake { return &c.hs }

// Errors of calls made out of turn; they do not close the connection.
var (
	ErrNotDone     = errors.New("quic: Next before the current response is complete")
	ErrClosed      = errors.New("quic: the connection is closed")
	ErrNoKeepAlive = errors.New("quic: Next on a connection without Config.KeepAlive")
)

// Next starts the next request on the connection, after Done: on the
// next client bidirectional stream (4, 8, 12, ...), with Status,
// BodyBytes and Done reset and the request's deadline at now +
// Config.Timeout. It appends at most one datagram to out: the request
// (with a pending ACK and MAX_DATA), or, when the server's stream limit
// or flow-control credit does not allow the request yet, only a pending
// ACK; the request then waits inside the Conn and goes out with the
// Receive that raises the limit, its deadline running meanwhile. Next
// when not Done, on a closed connection or without Config.KeepAlive
// returns an error (ErrNotDone, ErrClosed, ErrNoKeepAlive) and changes
// nothing. Check Reusable first: Next does not.
func (c *Conn) Next(now time.Time, out []byte) ([]byte, error) {
	switch {
	case c.closed:
		return out, ErrClosed
	case !c.keepAlive:
		return out, ErrNoKeepAlive
	case !c.done:
		return out, ErrNotDone
	}
	c.done, c.reqQueued, c.curOpen = false, true, false
	c.resp.Reset()
	c.deadline = now.Add(c.cl.cfg.Timeout)
	c.tryRequest()
	if c.reqQueued {
		c.ackNow = true // the server may be waiting for it to free a stream
	}
	return c.flush(now, out), nil
}

// tryRequest opens the queued request's stream if the server's limits
// allow it.
func (c *Conn) tryRequest() {
	n := uint64(len(c.cl.cfg.request))
	if !c.reqQueued || c.opened >= c.peerStreams || c.sentData+n > c.peerData {
		return
	}
	c.reqID = 4 * c.opened
	c.opened++
	c.sentData += n
	c.reqQueued, c.curOpen, c.reqSent, c.reqAcked, c.sendReq = false, true, false, false, true
	c.stream.reset()
	c.finSeen, c.streamHigh = false, 0
}

// Reusable reports whether Next may be called with a good chance of a
// response: the response is Done, the connection open without an
// error, its handshake complete, no GOAWAY from the server, not idle
// for longer than the idle timeout less a margin (IdleTimeout), and
// fewer than MaxPackets packets sent with its keys. A connection that is
// not Reusable should be closed (Close) and a new one started.
func (c *Conn) Reusable(now time.Time) bool {
	return c.done && !c.closed && c.err == nil && !c.doneAt.IsZero() && !c.ctlParse.GoAway &&
		c.lv[lvlApp].nextPN < MaxPackets && now.Sub(c.lastRecv) < c.IdleTimeout()-c.idleMargin()
}

// IdleTimeout is the connection's effective idle timeout (RFC 9000
// §10.1): the smaller of the client's max_idle_timeout
// (Config.Timeout) and the server's, if it sent one. A server discards
// a connection silently once it was idle this long.
func (c *Conn) IdleTimeout() time.Duration {
	d := c.cl.cfg.Timeout.Truncate(time.Millisecond)
	if p := time.Duration(c.peer.MaxIdleTimeout) * time.Millisecond; p > 0 && p < d {
		d = p
	}
	return d
}

// idleMargin is how long before the idle timeout Reusable turns false:
// three probe timeouts of a request (the request reaching the server
// even if it or its first resend is lost), at least 10ms. Three PTOs
// rather than a fixed second, so that short idle timeouts (a few
// hundred milliseconds) still leave the connection usable.
func (c *Conn) idleMargin() time.Duration {
	d := max(3*c.rtt, minPTO) + time.Duration(c.peer.MaxAckDelay)*time.Millisecond
	return max(3*d, 10*time.Millisecond)
}

// Close ends the connection: it appends an application CONNECTION_CLOSE
// (H3_NO_ERROR), with a pending ACK, if the connection is open and has
// 1-RTT keys, and marks it closed (Closed true; Err unchanged, so nil
// for a connection that had not failed). A request in flight is
// abandoned. Closing a closed connection appends nothing.
func (c *Conn) Close(now time.Time, out []byte) []byte {
	if c.closed {
		return out
	}
	if l := &c.lv[lvlApp]; l.seal.Ready() && c.err == nil {
		p0 := len(out)
		b, pnOff := wire.AppendShortHeader(out, c.dcid[:c.dcidLen], c.phase, l.nextPN)
		if l.acks.n > 0 {
			b = l.acks.appendAck(b, now)
		}
		b = wire.AppendConnectionClose(b, true, h3.H3NoError, "")
		out = l.seal.Seal(b, p0, -1, pnOff, l.nextPN)
		l.nextPN++
	}
	c.closed, c.ptoAt, c.ackAt = true, time.Time{}, time.Time{}
	return out
}

// Deadline returns when Timeout must next be called, or zero when
// nothing is due (closed, or idle between keep-alive requests with
// nothing to acknowledge or resend). While a request is in flight it
// includes the request's deadline; between requests only the delayed
// ACK and a probe timeout for unacknowledged data (MAX_DATA).
func (c *Conn) Deadline() time.Time {
	if c.closed {
		return time.Time{}
	}
	var d time.Time
	if !c.done {
		d = c.deadline
		if c.doneAt.IsZero() && c.hsDeadline.Before(d) {
			d = c.hsDeadline
		}
	}
	if !c.ptoAt.IsZero() && (d.IsZero() || c.ptoAt.Before(d)) {
		d = c.ptoAt
	}
	if !c.ackAt.IsZero() && (d.IsZero() || c.ackAt.Before(d)) {
		d = c.ackAt
	}
	return d
}

// Timeout handles the timers due at now (Deadline passed) and appends
// what to send (at most one datagram) to out: a delayed ACK, the
// client's flight, request or MAX_DATA again on a probe timeout, or
// nothing when the handshake or the request times out, which closes the
// connection with ErrHandshakeTimeout or ErrTimeout: with keep-alive, a
// request that times out takes its connection down.
func (c *Conn) Timeout(now time.Time, out []byte) ([]byte, error) {
	if c.closed {
		return out, c.err
	}
	if c.doneAt.IsZero() && !now.Before(c.hsDeadline) {
		c.closeErr(ErrHandshakeTimeout)
		return out, c.err
	}
	if !c.done && !now.Before(c.deadline) {
		c.closeErr(ErrTimeout)
		return out, c.err
	}
	if !c.ptoAt.IsZero() && !now.Before(c.ptoAt) {
		c.ptoCount++
		c.ptoAt = time.Time{}
		switch {
		case c.doneAt.IsZero() && !c.lv[lvlHandshake].open.Ready():
			c.sendCrypto[0] = true
		case c.doneAt.IsZero():
			c.sendPing = true
		default:
			if !c.confirmed {
				c.sendCrypto[1] = true
			}
			if c.curOpen && !c.reqAcked {
				c.sendReq = true
			}
			if c.maxDataOut {
				c.sendMaxData = true
			}
		}
	}
	return c.flush(now, out), nil
}

// closeErr closes the connection with err without sending anything.
func (c *Conn) closeErr(err *Error) {
	c.closed, c.err = true, err
	c.ptoAt, c.ackAt = time.Time{}, time.Time{}
}

// fail closes the connection with err, to be reported to the server in
// a CONNECTION_CLOSE by the next flush; it returns err.
func (c *Conn) fail(err *Error) error {
	if c.closed {
		return c.err
	}
	c.err, c.closeAs = err, err
	return err
}

// Receive processes one datagram from the server (it is decrypted in
// place, so its bytes are changed) and appends what to send (at most one
// datagram) to out. Packets that are not for this connection or that
// fail authentication are dropped, as QUIC requires. A non-nil error
// means the connection failed (Closed is true); out may still hold a
// CONNECTION_CLOSE to send.
func (c *Conn) Receive(now time.Time, d []byte, out []byte) ([]byte, error) {
	if c.closed {
		return out, c.err
	}
	for len(d) > 0 && c.closeAs == nil && !c.closed {
		h, err := wire.ParseHeader(d, ConnIDLen)
		if err != nil {
			if debugf != nil {
				debugf("header: %v", err)
			}
			break
		}
		pkt := d[:h.Len]
		d = d[h.Len:]
		if !bytes.Equal(h.DCID, c.scid) {
			continue
		}
		var lvl int
		switch h.Type {
		case wire.VersionNegotiation:
			c.versionNegotiation(&h)
			continue
		case wire.Retry:
			c.handleRetry(&h, pkt)
			continue
		case wire.Initial:
			lvl = lvlInitial
		case wire.Handshake:
			lvl = lvlHandshake
		case wire.Short:
			lvl = lvlApp
		default:
			continue
		}
		if h.Type != wire.Short && h.Version != wire.Version1 {
			continue
		}
		l := &c.lv[lvl]
		if !l.open.Ready() {
			continue
		}
		var pn uint64
		var payload []byte
		if lvl == lvlApp {
			pn, payload, err = c.open1RTT(pkt, h.PNOffset)
		} else {
			pn, payload, err = l.open.Open(pkt, h.PNOffset, l.acks.largest)
		}
		if err != nil {
			if debugf != nil {
				debugf("open failed lvl %d len %d", lvl, len(pkt))
			}
			continue
		}
		if lvl == lvlInitial && !c.gotServer {
			c.dcidLen = copy(c.dcid[:], h.SCID)
			if !c.initialSentAt.IsZero() {
				if s := now.Sub(c.initialSentAt); s > 0 && c.ptoCount == 0 {
					c.rtt = s
				}
			}
		}
		c.gotServer = true
		c.lastRecv = now
		if !l.acks.add(pn, now) {
			if debugf != nil {
				debugf("dup lvl %d pn %d", lvl, pn)
			}
			continue // a duplicate
		}
		if debugf != nil {
			debugf("lvl %d pn %d len %d", lvl, pn, len(payload))
		}
		elicit, perr := c.frames(now, lvl, payload)
		if perr != nil {
			_ = c.fail(perr) // kept as c.err; the datagram's other packets are dropped
			break
		}
		if elicit {
			l.acks.pending++
			if lvl == lvlApp && c.ackAt.IsZero() {
				c.ackAt = now.Add(ackDelay)
			}
		}
	}
	if c.reqQueued && c.closeAs == nil && !c.closed {
		c.tryRequest()
	}
	out = c.flush(now, out)
	if c.closed {
		return out, c.err
	}
	return out, nil
}

// open1RTT opens a 1-RTT packet, following a key update by the server:
// a packet in the other key phase that opens with the next keys moves
// both directions to them.
func (c *Conn) open1RTT(pkt []byte, pnOff int) (uint64, []byte, error) {
	l := &c.lv[lvlApp]
	pn, hdrEnd, err := l.open.Unprotect(pkt, pnOff, l.acks.largest)
	if err != nil {
		return 0, nil, err
	}
	if wire.KeyPhase(pkt[0]) == c.phase {
		p, err := l.open.Decrypt(pkt, hdrEnd, pn)
		return pn, p, err
	}
	if int64(pn) <= l.acks.largest {
		return 0, nil, wire.ErrDecrypt // the old phase's, reordered: dropped
	}
	s := c.hs.Suite()
	k := c.cl.kdf(s)
	ns := wire.NextSecret(k, c.tmp[:0], c.sSecret[:c.nsecret])
	if err := c.next.Update(k, s, ns, &l.open); err != nil {
		return 0, nil, err
	}
	p, err := c.next.Decrypt(pkt, hdrEnd, pn)
	if err != nil {
		return 0, nil, err
	}
	l.open = c.next
	copy(c.sSecret[:], ns)
	cs := wire.NextSecret(k, c.tmp[:0], c.cSecret[:c.nsecret])
	copy(c.cSecret[:], cs)
	if err := l.seal.Update(k, s, cs, &l.seal); err != nil {
		return 0, nil, err
	}
	c.phase = !c.phase
	c.keyUpdates++
	return pn, p, nil
}

// versionNegotiation handles a Version Negotiation packet: one that does
// not list version 1 ends the connection.
func (c *Conn) versionNegotiation(h *wire.Header) {
	if c.gotServer || c.retried || !bytes.Equal(h.SCID, c.dcid[:c.dcidLen]) {
		return
	}
	v := h.Versions
	for i := 0; i+4 <= len(v); i += 4 {
		if v[i] == 0 && v[i+1] == 0 && v[i+2] == 0 && v[i+3] == 1 {
			return // it lists v1: to be ignored (RFC 9000 §6.2)
		}
	}
	c.closeErr(ErrVersionNegotiation)
}

// handleRetry follows a Retry whose integrity tag verifies.
func (c *Conn) handleRetry(h *wire.Header, pkt []byte) {
	if c.retried || c.gotServer || len(h.Token) == 0 || len(h.SCID) == 0 {
		return
	}
	var ok bool
	ok, c.scratch = wire.VerifyRetry(c.scratch, c.dcid[:c.dcidLen], pkt)
	if !ok {
		return
	}
	c.retried = true
	c.token = append(c.token[:0], h.Token...)
	c.retryN = copy(c.retry[:], h.SCID)
	c.dcidLen = copy(c.dcid[:], h.SCID)
	l := &c.lv[lvlInitial]
	if err := wire.SetInitialKeys(c.cl.kdf256, c.dcid[:c.dcidLen], &l.seal, &l.open); err != nil {
		_ = c.fail(&Error{Class: ClassTLS, Reason: "initial keys after Retry", Err: err}) // kept as c.err
		return
	}
	c.sendCrypto[0] = true
	c.ptoCount = 0
}

// frames processes a packet's frames; it reports whether any asked for
// an ACK.
func (c *Conn) frames(now time.Time, lvl int, p []byte) (elicit bool, err *Error) {
	var f wire.Frame
	for len(p) > 0 {
		n, ferr := wire.ParseFrame(p, &f)
		if ferr != nil {
			return elicit, protocolError(codeFrameEncoding, false, "", ferr)
		}
		p = p[n:]
		if wire.AckEliciting(f.Type) {
			elicit = true
		}
		if lvl != lvlApp {
			switch f.Type {
			case wire.FramePadding, wire.FramePing, wire.FrameAck, wire.FrameAckECN, wire.FrameCrypto,
				wire.FrameConnectionClose:
			default:
				return elicit, protocolError(codeProtocolViolate, false, "a frame not allowed in Initial or Handshake packets", nil)
			}
		}
		switch f.Type {
		case wire.FrameCrypto:
			if lvl == lvlApp {
				continue // NewSessionTicket: not used
			}
			if err := c.cryptoData(now, lvl, f.Offset, f.Data); err != nil {
				return elicit, err
			}
		case wire.FrameAck, wire.FrameAckECN:
			if lvl == lvlApp {
				c.confirmed = true
				if f.Largest >= c.lv[lvlApp].nextPN {
					return elicit, protocolError(codeProtocolViolate, false, "an ACK of a packet the client did not send", nil)
				}
				c.acked(&f)
			}
		case wire.FrameStream:
			if err := c.streamData(f.StreamID, f.Offset, f.Data, f.Fin); err != nil {
				return elicit, err
			}
		case wire.FrameResetStream:
			if f.StreamID == c.reqID && c.curOpen && !c.done {
				return elicit, &Error{Class: ClassStreamReset, Code: f.ErrorCode, App: true, Reason: "the server reset the request stream"}
			}
		case wire.FrameMaxData:
			c.peerData = max(c.peerData, f.Offset)
		case wire.FrameMaxStreamsBidi:
			if f.Offset > 1<<60 {
				return elicit, protocolError(codeFrameEncoding, false, "MAX_STREAMS above 2^60", nil)
			}
			c.peerStreams = max(c.peerStreams, f.Offset)
		case wire.FrameNewConnectionID:
			if f.RetirePriorTo > 0 {
				// The server retires the connection ID the client uses
				// (sequence number 0): see ErrConnIDRetired.
				return elicit, ErrConnIDRetired
			}
		case wire.FrameConnectionClose, wire.FrameConnectionCloseApp:
			e := &Error{Class: ClassPeerClosed, Code: f.ErrorCode, App: f.Type == wire.FrameConnectionCloseApp, Reason: "the server closed the connection"}
			if len(f.Reason) > 0 {
				e.Reason += ": " + string(f.Reason)
			}
			c.closeErr(e)
			return elicit, nil
		case wire.FrameHandshakeDone:
			c.confirmed = true
			c.lv[lvlHandshake].seal.Drop()
			c.lv[lvlHandshake].open.Drop()
			c.sendCrypto[1] = false
		}
	}
	return elicit, nil
}

// cryptoData feeds CRYPTO bytes to the TLS handshake and installs keys as
// they become known.
func (c *Conn) cryptoData(now time.Time, lvl int, off uint64, data []byte) *Error {
	r := &c.crypto[lvl]
	d, ok := r.push(off, data)
	if !ok {
		return protocolError(0x0d, false, "too much out-of-order CRYPTO data", nil) // CRYPTO_BUFFER_EXCEEDED
	}
	tl := tls13.LevelInitial
	if lvl == lvlHandshake {
		tl = tls13.LevelHandshake
	}
	for ; d != nil; d = r.next() {
		if c.hs.Done() {
			continue // after the server's Finished: nothing is expected
		}
		var err error
		c.tlsOut, err = c.hs.ReadQUIC(tl, d, c.tlsOut[:0])
		if err != nil {
			code := uint64(codeInternal)
			if te, ok := err.(*tls13.Error); ok {
				code = codeCryptoBase + uint64(te.Alert)
			}
			return &Error{Class: ClassTLS, Code: code, Err: err}
		}
		if !c.lv[lvlHandshake].open.Ready() {
			if cs, ss := c.hs.HandshakeSecrets(); cs != nil {
				s := c.hs.Suite()
				k := c.cl.kdf(s)
				l := &c.lv[lvlHandshake]
				if err := l.seal.Set(k, s, cs); err != nil {
					return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
				}
				if err := l.open.Set(k, s, ss); err != nil {
					return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
				}
				c.sendCrypto[0] = false
				// The server has the ClientHello. Until its flight is
				// complete, a probe timeout sends a Handshake PING
				// (RFC 9002 §6.2.4).
				c.ptoCount = 0
				c.ptoAt = now.Add(c.pto())
			}
		}
		if c.hs.Done() {
			if err := c.handshakeDone(now); err != nil {
				return err
			}
		} else if len(c.tlsOut) > 0 { // a second ClientHello
			c.sent[0] = append(c.sent[0], c.tlsOut...)
			c.sendCrypto[0] = true
		}
	}
	return nil
}

// handshakeDone checks the server's transport parameters, installs the
// 1-RTT keys and queues the client's Finished and the request.
func (c *Conn) handshakeDone(now time.Time) *Error {
	c.doneAt = now
	p := &c.peer
	if err := wire.ParseTransportParams(c.hs.QUICTransportParams(), p); err != nil {
		return protocolError(codeTransportParam, false, "", err)
	}
	switch {
	case !p.HasOriginalDCID || !bytes.Equal(p.OriginalDCID, c.odcid),
		!p.HasInitialSCID || !bytes.Equal(p.InitialSCID, c.dcid[:c.dcidLen]),
		c.retried != p.HasRetrySCID,
		c.retried && !bytes.Equal(p.RetrySCID, c.retry[:c.retryN]):
		return protocolError(codeTransportParam, false, "the server's connection IDs in its transport parameters do not match", nil)
	case p.MaxStreamsBidi < 1 || p.MaxStreamsUni < 1 || p.InitialMaxData < uint64(len(c.cl.cfg.request)+len(c.cl.cfg.control)) ||
		p.MaxStreamDataBidiR < uint64(len(c.cl.cfg.request)) || p.MaxStreamDataUni < uint64(len(c.cl.cfg.control)):
		return protocolError(codeTransportParam, false, "the server's limits do not allow the request", nil)
	}
	// Stream 0 and the control stream take their credit now; the limits
	// may have risen already (MAX_STREAMS, MAX_DATA in an earlier 1-RTT
	// packet).
	c.peerStreams = max(c.peerStreams, p.MaxStreamsBidi)
	c.peerData = max(c.peerData, p.InitialMaxData)
	c.sentData = uint64(len(c.cl.cfg.request) + len(c.cl.cfg.control))
	s := c.hs.Suite()
	k := c.cl.kdf(s)
	cs, ss := c.hs.ApplicationKeys()
	l := &c.lv[lvlApp]
	if err := l.seal.Set(k, s, cs.Secret); err != nil {
		return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
	}
	if err := l.open.Set(k, s, ss.Secret); err != nil {
		return &Error{Class: ClassTLS, Code: codeInternal, Err: err}
	}
	c.phase, c.keyUpdates = false, 0
	c.nsecret = copy(c.cSecret[:], cs.Secret)
	copy(c.sSecret[:], ss.Secret)
	c.sent[1] = append(c.sent[1][:0], c.tlsOut...)
	c.sendCrypto[1] = true
	c.sendReq = true
	c.ptoAt, c.ptoCount = time.Time{}, 0
	return nil
}

// acked handles a 1-RTT ACK frame: it marks what the client's packets
// carried (the request, the control stream, MAX_DATA) as delivered.
func (c *Conn) acked(f *wire.Frame) {
	if int64(f.Largest) > c.largestAck {
		c.largestAck = int64(f.Largest)
		c.ptoCount = 0 // RFC 9002 §6.2.1: reset on an acknowledgement
	}
	if c.curOpen && c.reqSent && !c.reqAcked && ackCovers(f, c.reqPN) {
		c.reqDelivered()
	}
	if c.maxDataOut && ackCovers(f, c.maxDataPN) {
		c.maxDataOut = false
	}
}

// reqDelivered records that the server has the current request (and the
// control stream, if it rode with it).
func (c *Conn) reqDelivered() {
	c.reqAcked = true
	if c.reqCtrl {
		c.ctrlAcked = true
	}
}

// ackCovers reports whether the ACK frame f acknowledges packet pn.
func ackCovers(f *wire.Frame, pn uint64) bool {
	hi := f.Largest
	lo := hi - f.FirstRange
	if pn > hi {
		return false
	}
	if pn >= lo {
		return true
	}
	b := f.Data
	for len(b) > 0 {
		gap, n := wire.ReadVarint(b)
		if n == 0 {
			return false
		}
		l, m := wire.ReadVarint(b[n:])
		if m == 0 || gap+2 > lo {
			return false
		}
		b = b[n+m:]
		hi = lo - gap - 2
		if l > hi {
			return false
		}
		lo = hi - l
		if pn > hi {
			return false
		}
		if pn >= lo {
			return true
		}
	}
	return false
}

// received counts the bytes from a stream's highest offset high to end
// against the connection's receive credit, and queues a MAX_DATA when
// less than half the window is left.
func (c *Conn) received(high *uint64, end uint64) *Error {
	if end <= *high {
		return nil
	}
	c.recvData += end - *high
	*high = end
	if c.recvData > c.recvMax {
		return protocolError(codeFlowControl, false, "the server sent beyond the connection's flow-control limit", nil)
	}
	if w := c.cl.cfg.Window; c.recvMax-c.recvData < w/2 {
		c.recvMax = c.recvData + w
		c.sendMaxData = true
	}
	return nil
}

// streamData handles a STREAM frame.
func (c *Conn) streamData(id, off uint64, data []byte, fin bool) *Error {
	end := off + uint64(len(data))
	switch {
	case id&3 == 3:
		return c.uniData(id, off, end, data)
	case id&3 != 0:
		return protocolError(0x05, false, "STREAM frame on a stream the server may not send on", nil) // STREAM_STATE_ERROR
	case id >= 4*c.opened:
		return protocolError(0x05, false, "STREAM frame on a request stream the client has not opened", nil)
	case id != c.reqID || !c.curOpen:
		return nil // an earlier request's stream, complete: a retransmission
	}
	r := &c.stream
	if end > c.cl.cfg.Window {
		return protocolError(codeFlowControl, false, "the server sent beyond the flow-control window", nil)
	}
	if fin && r.fin >= 0 && uint64(r.fin) != end || r.fin >= 0 && end > uint64(r.fin) {
		return protocolError(0x06, false, "the request stream's final size changed", nil) // FINAL_SIZE_ERROR
	}
	if fin {
		r.fin = int64(end)
	}
	if err := c.received(&c.streamHigh, end); err != nil {
		return err
	}
	if !c.reqAcked {
		c.reqDelivered() // the server got the request
	}
	d, ok := r.push(off, data)
	if !ok {
		return protocolError(codeFlowControl, false, "too much out-of-order stream data", nil)
	}
	for ; d != nil; d = r.next() {
		if err := c.resp.Feed(d, false); err != nil {
			return protocolError(h3FrameError, true, "", err)
		}
	}
	if r.finished() && !c.finSeen {
		c.finSeen = true
		if err := c.resp.Feed(nil, true); err != nil {
			return protocolError(h3MessageError, true, "", err)
		}
		c.done = true
		c.requests++
		if !c.keepAlive {
			c.closeQueue = true
		}
	}
	return nil
}

// uniData handles STREAM data on one of the server's unidirectional
// streams: counted for flow control; the first one's (3, the control
// stream) parsed for GOAWAY; the others' (QPACK streams, unused with a
// zero-capacity table) dropped.
func (c *Conn) uniData(id, off, end uint64, data []byte) *Error {
	i := id >> 2
	if i >= maxUniStreams {
		return protocolError(0x04, false, "the server opened more unidirectional streams than allowed", nil) // STREAM_LIMIT_ERROR
	}
	if end > uniWindow {
		return protocolError(codeFlowControl, false, "the server sent beyond a unidirectional stream's flow-control window", nil)
	}
	if err := c.received(&c.uniHigh[i], end); err != nil {
		return err
	}
	if i != 0 || c.ctlParse.NotControl {
		return nil
	}
	d, ok := c.ctl.push(off, data)
	if !ok {
		return protocolError(codeFlowControl, false, "too much out-of-order control stream data", nil)
	}
	for ; d != nil; d = c.ctl.next() {
		if err := c.ctlParse.Feed(d); err != nil {
			return protocolError(h3FrameError, true, "", err)
		}
	}
	return nil
}

// flush appends at most one datagram with what is due: ACKs, the
// client's CRYPTO data, the request, a CONNECTION_CLOSE.
func (c *Conn) flush(now time.Time, out []byte) []byte {
	if c.closed {
		return out
	}
	start := len(out)
	dcid := c.dcid[:c.dcidLen]
	hsReady := c.lv[lvlHandshake].seal.Ready()
	ackEliciting, appSent := false, false

	// Initial: only until the Handshake keys are known; then the client
	// drops them (RFC 9001 §4.9.1) once it sends a Handshake packet.
	if l := &c.lv[lvlInitial]; l.seal.Ready() && !hsReady && (l.acks.pending > 0 || c.sendCrypto[0] || c.closeAs != nil) {
		b, lenOff, pnOff := wire.AppendLongHeader(out, wire.Initial, dcid, c.scid, c.token, l.nextPN)
		if l.acks.n > 0 {
			b = l.acks.appendAck(b, now)
		}
		if c.closeAs != nil {
			b = c.appendClose(b, false)
		} else if c.sendCrypto[0] {
			b = wire.AppendCrypto(b, 0, c.sent[0])
			c.sendCrypto[0] = false
			ackEliciting = true
			c.initialSentAt = now
		}
		// Pad inside the packet to MinDatagram.
		if pad := MinDatagram - (len(b) - start) - wire.Overhead; pad > 0 {
			b = append(b, zeros[:pad]...)
		}
		out = l.seal.Seal(b, start, lenOff, pnOff, l.nextPN)
		l.nextPN++
	}
	if l := &c.lv[lvlHandshake]; hsReady && (l.acks.pending > 0 || c.sendCrypto[1] || c.sendPing || c.closeAs != nil && !c.lv[lvlApp].seal.Ready()) {
		c.lv[lvlInitial].seal.Drop()
		c.lv[lvlInitial].open.Drop()
		p0 := len(out)
		b, lenOff, pnOff := wire.AppendLongHeader(out, wire.Handshake, dcid, c.scid, nil, l.nextPN)
		if l.acks.n > 0 {
			b = l.acks.appendAck(b, now)
		}
		if c.closeAs != nil && !c.lv[lvlApp].seal.Ready() {
			b = c.appendClose(b, false)
		} else {
			if c.sendCrypto[1] {
				b = wire.AppendCrypto(b, 0, c.sent[1])
				c.sendCrypto[1] = false
				ackEliciting = true
			}
			if c.sendPing {
				b = append(b, wire.FramePing)
				c.sendPing = false
				ackEliciting = true
			}
		}
		out = l.seal.Seal(b, p0, lenOff, pnOff, l.nextPN)
		l.nextPN++
	}
	// 1-RTT: a MAX_DATA goes out at once while a response arrives or
	// when it is sent again on a probe timeout; between requests a new
	// one waits to ride on the next packet (the request's).
	if l := &c.lv[lvlApp]; l.seal.Ready() && (c.ackDue(now) || c.sendReq || c.closeQueue || c.closeAs != nil || c.sendMaxData && (!c.done || c.maxDataOut)) {
		p0 := len(out)
		pn := l.nextPN
		b, pnOff := wire.AppendShortHeader(out, dcid, c.phase, pn)
		if l.acks.n > 0 && (l.acks.pending > 0 || c.closeQueue) {
			b = l.acks.appendAck(b, now)
			c.ackAt = time.Time{}
		}
		c.ackNow = false
		if c.sendMaxData && c.closeAs == nil && !c.closeQueue {
			b = wire.AppendMaxData(b, c.recvMax)
			c.sendMaxData, c.maxDataOut, c.maxDataPN = false, true, pn
			ackEliciting, appSent = true, true
		}
		switch {
		case c.closeAs != nil:
			b = c.appendClose(b, true)
		case c.closeQueue:
			b = wire.AppendConnectionClose(b, true, h3.H3NoError, "")
		case c.sendReq:
			cfg := c.cl.cfg
			c.reqCtrl = !c.ctrlAcked
			if c.reqCtrl {
				b = wire.AppendStream(b, streamControl, 0, cfg.control, false)
			}
			b = wire.AppendStream(b, c.reqID, 0, cfg.request, true)
			c.sendReq, c.reqSent = false, true
			c.reqPN = pn
			ackEliciting, appSent = true, true
		}
		out = l.seal.Seal(b, p0, -1, pnOff, pn)
		l.nextPN++
	}
	if c.closeAs != nil {
		c.closeErr(c.closeAs)
	} else if c.closeQueue {
		c.closed, c.ptoAt, c.ackAt = true, time.Time{}, time.Time{}
	} else if ackEliciting {
		d := c.pto()
		if appSent {
			// The server may delay its ACK of 1-RTT packets by its
			// max_ack_delay (RFC 9002 §6.2.1).
			d += time.Duration(c.peer.MaxAckDelay) * time.Millisecond
		}
		c.ptoAt = now.Add(d)
	} else if c.confirmed && !c.inFlight() {
		c.ptoAt = time.Time{} // nothing of the client's is in flight
	}
	return out
}

// inFlight reports whether something the client sent in 1-RTT packets
// awaits an acknowledgement: the request (its first one also the
// control stream) or a MAX_DATA.
func (c *Conn) inFlight() bool {
	return c.curOpen && !c.reqAcked || c.maxDataOut
}

// ackDue reports whether a 1-RTT ACK must go out now. While a response
// is arriving (or before the handshake's end) every second ack-eliciting
// packet is acknowledged at once, which the server's congestion control
// needs; once the response is Done (keep-alive) the ACK waits for the
// next request's packet, or for the delayed-ACK timer (ackDelay, below
// the max_ack_delay the client advertises) if that comes first
// (RFC 9000 §13.2.1 allows delaying up to max_ack_delay).
func (c *Conn) ackDue(now time.Time) bool {
	p := c.lv[lvlApp].acks.pending
	if p == 0 {
		return false
	}
	return c.ackNow || !now.Before(c.ackAt) || p >= 2 && !(c.keepAlive && c.done)
}

// debugf, if set (tests), traces packets.
var debugf func(format string, args ...any)

// zeros are PADDING frames.
var zeros [MinDatagram]byte

// minPTO is the probe timeout's floor: RFC 9002's timer granularity
// (1ms) above the RTT, so that a loopback RTT of microseconds does not
// make the client resend while the server is still computing.
const minPTO = 2 * time.Millisecond

// pto is the probe timeout: 3x the RTT (RFC 9002's srtt + 4*rttvar with
// the initial rttvar of rtt/2), at least minPTO, doubled per expiry (at
// most 2^6).
func (c *Conn) pto() time.Duration {
	return max(3*c.rtt, minPTO) << min(c.ptoCount, 6)
}

// appendClose appends the CONNECTION_CLOSE for the client's own error:
// an application H3 code only in 1-RTT packets (RFC 9000 §10.2.3).
func (c *Conn) appendClose(b []byte, app bool) []byte {
	e := c.closeAs
	code := e.Code
	switch {
	case e.App && !app:
		code = 0x0c // APPLICATION_ERROR
	case e.Class == ClassConnIDRetired:
		code = 0 // NO_ERROR
	case code == 0:
		code = codeProtocolViolate
	}
	return wire.AppendConnectionClose(b, e.App && app, code, "")
}
