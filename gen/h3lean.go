package gen

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	genquic "github.com/loadlab/loadlab/gen/quic"
	"github.com/loadlab/loadlab/gen/tls13"
)

// The lean HTTP/3 path ({TLS.Engine} lean with {NewConn}): each request is
// one connection of package gen/quic's client, driven by the slot's worker
// over the slot's own UDP socket, instead of a quic-go dial and an http3
// request. The loops, the schedule, settle and the error classes are the
// same as quic-go's path; only how a request runs (doLean) differs.

// leanSlice bounds each blocking read, so that a worker notices the run's
// end within it.
const leanSlice = 50 * time.Millisecond

// h3Lean is one slot's lean client state. Not safe for concurrent use:
// the slot's worker owns it.
type h3Lean struct {
	cl   *genquic.Client
	conn genquic.Conn // restarted for each request
	dst  netip.AddrPort
	buf  []byte // one received datagram
	out  []byte // one datagram to send
	hsOK bool   // a handshake completed: the session was captured
}

// newLeanQUIC prepares the run's lean QUIC configuration from the lean TLS
// one (set when leanTLS chose lean for this HTTP/3 run).
func newLeanQUIC(r *run, req authorityPath) (*genquic.Config, error) {
	qc := &genquic.Config{TLS: r.tls.Lean, Authority: req.authority, Path: req.path,
		HandshakeTimeout: r.cfg.Timeout, Timeout: r.cfg.Timeout}
	if err := qc.Prepare(); err != nil {
		return nil, fmt.Errorf("lean QUIC client: %w", err)
	}
	return qc, nil
}

// authorityPath is what the lean client's request carries.
type authorityPath struct{ authority, path string }

func newH3Lean(qc *genquic.Config, dst *net.UDPAddr) (*h3Lean, error) {
	cl, err := genquic.NewClient(qc)
	if err != nil {
		return nil, fmt.Errorf("lean QUIC client: %w", err)
	}
	return &h3Lean{cl: cl, dst: dst.AddrPort(), buf: make([]byte, 64<<10), out: make([]byte, 0, genquic.MinDatagram)}, nil
}

// doLean runs one request as one lean QUIC connection into c.out.
func (c *h3Conn) doLean(o *h3Out, deadline time.Time) {
	l, lc := c.l, c.lean
	q := &lc.conn
	if c.sum != nil {
		q.Body = c.sum
	}
	start := l.lc.r.start
	err := c.runLean(deadline)
	at, done := q.HandshakeDone()
	if done {
		o.handshake = true
		o.handshakeNs = int64(at.Sub(start)) - o.started
		o.written = int64(at.Sub(start)) // the request goes with the client's Finished
		l.countDial()
		c.e.versionOnce.Do(func() { c.e.version = "v1" }) // the lean client speaks QUIC v1 only
		if !lc.hsOK {
			lc.hsOK = true
			c.captureLean(q.Handshake())
		}
	}
	o.status, o.bytes = q.Status(), q.BodyBytes()
	if err == nil && c.sum != nil {
		var d [sha256.Size]byte
		if string(c.sum.Sum(d[:0])) != string(l.lc.r.cfg.VerifySHA256) {
			err = errBodyMismatch
		}
	}
	if c.sum != nil {
		c.sum.Reset()
	}
	if err == nil {
		o.done = l.lc.now()
		return
	}
	o.failed = l.lc.now()
	o.class, o.err = classifyLean(err), err
}

// errRunEndedLean: the run ended while the connection was still going.
var errRunEndedLean = errors.New("the run ended before the response")

// runLean starts the slot's Conn and feeds it datagrams and timeouts until
// it closes, deadline passes or the run ends.
func (c *h3Conn) runLean(deadline time.Time) error {
	lc, sock := c.lean, c.udp
	q := &lc.conn
	var err error
	lc.out, err = q.Start(lc.cl, time.Now(), lc.out[:0])
	if err != nil {
		return err
	}
	for !q.Closed() {
		if len(lc.out) > 0 {
			if _, werr := sock.WriteToUDPAddrPort(lc.out, lc.dst); werr != nil {
				return werr
			}
			lc.out = lc.out[:0]
		}
		if c.l.ctx.Err() != nil {
			return errRunEndedLean
		}
		now := time.Now()
		dl := q.Deadline()
		if dl.IsZero() || dl.After(deadline) {
			dl = deadline
		}
		if !now.Before(deadline) {
			return errTimeout
		}
		slice := now.Add(leanSlice)
		if dl.After(slice) {
			dl = slice
		}
		_ = sock.SetReadDeadline(dl)
		n, from, rerr := sock.ReadFromUDPAddrPort(lc.buf)
		now = time.Now()
		if rerr != nil {
			var ne net.Error
			if !errors.As(rerr, &ne) || !ne.Timeout() {
				continue // e.g. ICMP port unreachable: keep waiting, as QUIC does
			}
			if qd := q.Deadline(); !qd.IsZero() && !now.Before(qd) {
				lc.out, _ = q.Timeout(now, lc.out[:0])
			}
			continue
		}
		if from != lc.dst {
			continue // not the server's
		}
		lc.out, _ = q.Receive(now, lc.buf[:n], lc.out[:0])
	}
	if len(lc.out) > 0 {
		_, _ = sock.WriteToUDPAddrPort(lc.out, lc.dst) // the CONNECTION_CLOSE
		lc.out = lc.out[:0]
	}
	return q.Err()
}

// classifyLean maps gen/quic's classes to the run's.
func classifyLean(err error) ErrorClass {
	switch {
	case err == errBodyMismatch:
		return ErrBodyMismatch
	case err == errTimeout:
		return ErrTimeout
	}
	switch genquic.ClassOf(err) {
	case genquic.ClassTLS:
		return ErrTLS
	case genquic.ClassProtocol:
		return ErrParse
	case genquic.ClassPeerClosed:
		return ErrClosed
	case genquic.ClassHandshakeTimeout, genquic.ClassTimeout:
		return ErrTimeout
	case genquic.ClassStreamReset:
		return ErrStreamReset
	}
	return classify(err)
}

// captureLean tells the run's TLS account what the first lean handshake
// negotiated.
func (c *h3Conn) captureLean(hs *tls13.Handshake) { c.e.r.tls.Capture(tlsfd.LeanSession(hs)) }
