package gen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"hash"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// h3BufSize is each worker's body read buffer.
const h3BufSize = 16 << 10

// h3Job is one request handed to a worker: when it was due.
type h3Job struct {
	intended int64
}

// h3Out is the outcome of one request, filled by the worker and recorded by
// its loop's settle. Times are ns since the run start.
type h3Out struct {
	intended, started, written, done int64
	failed                           int64 // when a failed request was given up
	retried                          bool  // resent once on a new connection (see do)
	status                           int
	bytes                            int64 // body bytes (QPACK-compressed headers are not counted)
	err                              error
	class                            ErrorClass
	handshake                        bool  // this request dialed a new QUIC connection
	handshakeNs                      int64 // dial start to handshake done (0-RTT: to early data allowed)
	resumed, zeroRTT                 bool
}

// h3Conn is one connection slot of a loop: a UDP socket with its own
// quic.Transport, the QUIC connection on it (redialled per request with
// NewConn, or when the server closed it) and the worker goroutine that runs
// its requests one at a time.
type h3Conn struct {
	l    *h3Loop
	e    *h3Engine
	idx  int
	work chan h3Job // open loop: the next request (capacity 1)

	udp *net.UDPConn
	tr  *quic.Transport
	tls *tls.Config // the run's, or with TLS.Resume a copy with this slot's own session cache
	qc  *quic.Conn  // set and cleared by the worker under l.mu; finish reads it under l.mu
	cc  *http3.ClientConn

	req *http.Request // shared by the run's workers, read only
	buf []byte
	sum hash.Hash
	out h3Out

	// Guarded by l.mu: the request in flight, for the loop to give up
	// when the drain ends.
	busy     bool
	intended int64
}

func newH3Conn(l *h3Loop, idx int, req *http.Request, verify bool) *h3Conn {
	c := &h3Conn{l: l, e: l.e, idx: idx, work: make(chan h3Job, 1), req: req, buf: make([]byte, h3BufSize), tls: l.e.tlsConf}
	if l.lc.r.cfg.TLS.Resume {
		// Each slot resumes from its own previous connection's ticket:
		// tickets shared by concurrent handshakes are reused tickets (RFC
		// 8446 C.4 advises against it), and quic-go then writes to the
		// session state two handshakes share (a data race).
		c.tls = l.e.tlsConf.Clone()
		c.tls.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	if verify {
		c.sum = sha256.New()
	}
	return c
}

// worker is the worker goroutine. It is not locked to a thread: it blocks in
// quic-go calls, and the Go scheduler runs it on the run's CPUs.
func (c *h3Conn) worker() {
	l := c.l
	defer l.workers.Done()
	defer c.closeAll()
	<-l.lc.r.go_
	if c.l.lc.r.aborted.Load() {
		return
	}
	if !l.lc.open {
		for {
			job, ok := l.startClosed(c)
			if !ok {
				break
			}
			c.do(job)
			l.settle(c)
			if c.out.err != nil && l.ctx.Err() == nil {
				time.Sleep(l.backoff) // do not spin on a failing server
			}
		}
		return
	}
	for {
		select {
		case job := <-c.work:
			for more := true; more; {
				c.do(job)
				job, more = l.settle(c)
			}
		case <-l.ctx.Done():
			return
		}
	}
}

// do runs one request into c.out: dial if needed, send, read the response.
func (c *h3Conn) do(job h3Job) {
	l := c.l
	o := &c.out
	*o = h3Out{intended: job.intended}
	o.started = l.lc.now()
	// The timeout runs from here, through the dial and the exchange.
	deadline := l.lc.r.start.Add(time.Duration(o.started) + l.lc.r.cfg.Timeout)
	if c.qc != nil && c.qc.Context().Err() != nil {
		c.drop() // the server closed it while idle: not an error, reconnect
	}
	if c.qc == nil && !c.dial(o, deadline) {
		o.failed = l.lc.now()
		return
	}
	err := c.exchange(o, deadline)
	if err != nil && !o.handshake && isStreamOpenError(err) {
		// A kept-alive connection took no new request (the server is
		// shutting it down: GOAWAY). Nothing was sent: reconnect and send
		// it once, like the HTTP/1.1 engine after a keep-alive close.
		o.retried = true
		c.drop()
		if !c.dial(o, deadline) {
			o.failed = l.lc.now()
			return
		}
		err = c.exchange(o, deadline)
	}
	if err != nil && errors.Is(err, quic.Err0RTTRejected) {
		// The server refused the early data: finish the handshake and send
		// the request again at 1-RTT (it still counts from its intended time).
		if err = c.after0RTTRejected(deadline); err == nil {
			err = c.exchange(o, deadline)
		}
	}
	if err == nil {
		o.done = l.lc.now()
	} else {
		o.failed = l.lc.now()
		o.class, o.err = classifyH3(err)
	}
	if o.handshake && c.qc != nil {
		c.noteSession(o)
	}
	if c.qc != nil && (l.lc.r.cfg.NewConn || c.qc.Context().Err() != nil) {
		c.drop()
	}
}

// dial opens a new QUIC connection: a full handshake, or a resumed one
// when TLS.Resume left a session ticket, with early data when TLS.ZeroRTT.
func (c *h3Conn) dial(o *h3Out, deadline time.Time) bool {
	l, e := c.l, c.e
	t0 := l.lc.now()
	ctx, cancel := context.WithDeadline(l.ctx, deadline)
	var qc *quic.Conn
	var err error
	if l.lc.r.cfg.TLS.ZeroRTT {
		qc, err = c.tr.DialEarly(ctx, e.dst, c.tls, e.quicConf)
	} else {
		qc, err = c.tr.Dial(ctx, e.dst, c.tls, e.quicConf)
	}
	cancel()
	if err != nil {
		var hte *quic.HandshakeTimeoutError
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &hte) {
			err = errNoHandshake
		}
		o.class, o.err = classifyH3(err)
		return false
	}
	o.handshake = true
	o.handshakeNs = l.lc.now() - t0
	if !l.setConn(c, qc) {
		qc.CloseWithError(0, "")
		o.class, o.err = ErrOther, errRunEnded
		return false
	}
	c.cc = e.h3t.NewClientConn(qc)
	return true
}

// after0RTTRejected makes the connection usable after the server refused
// 0-RTT (quic-go resets its streams; HTTP/3 needs a new control stream).
func (c *h3Conn) after0RTTRejected(deadline time.Time) error {
	ctx, cancel := context.WithDeadline(c.l.ctx, deadline)
	defer cancel()
	qc, err := c.qc.NextConnection(ctx)
	if err != nil {
		return err
	}
	c.cc = c.e.h3t.NewClientConn(qc)
	return nil
}

// exchange sends the request and reads the whole response by deadline
// (the request's start plus the timeout, like the HTTP/1.1 engine's).
func (c *h3Conn) exchange(o *h3Out, deadline time.Time) error {
	o.written = c.l.lc.now()
	if c.e.body != nil {
		return c.exchangeBody(o, deadline)
	}
	str, err := c.cc.OpenRequestStream(c.l.ctx)
	if err != nil {
		return &streamOpenError{err}
	}
	str.SetDeadline(deadline)
	if err := str.SendRequestHeader(c.req); err != nil {
		abortStream(str)
		return err
	}
	str.Close()                    // no body: end the request
	rsp, err := str.ReadResponse() //nolint:bodyclose // the body is the stream: readBody reads it to the end, abortStream cancels it
	if err != nil {
		abortStream(str)
		return err
	}
	o.status = rsp.StatusCode
	o.bytes, err = c.readBody(str)
	if err != nil {
		abortStream(str)
	}
	return err
}

// exchangeBody sends a request with a body through ClientConn.RoundTrip,
// which streams the body from a goroutine of its own (so each request gets
// its own reader).
func (c *h3Conn) exchangeBody(o *h3Out, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(c.l.ctx, deadline)
	defer cancel()
	req := c.req.WithContext(ctx)
	req.Body = io.NopCloser(bytes.NewReader(c.e.body))
	req.ContentLength = int64(len(c.e.body))
	rsp, err := c.cc.RoundTrip(req)
	if err != nil {
		if strings.HasPrefix(err.Error(), "http3: conn unusable") { // http3's errConnUnusable: no stream opened
			return &streamOpenError{err}
		}
		return err
	}
	o.status = rsp.StatusCode
	o.bytes, err = c.readBody(rsp.Body)
	rsp.Body.Close()
	return err
}

// streamOpenError: the connection opened no stream for the request, so
// nothing was sent.
type streamOpenError struct{ err error }

func (e *streamOpenError) Error() string { return e.err.Error() }
func (e *streamOpenError) Unwrap() error { return e.err }

// isStreamOpenError: errors.As with its target off the success path (the
// target escapes: one allocation per call).
func isStreamOpenError(err error) bool {
	var noStream *streamOpenError
	return errors.As(err, &noStream)
}

func abortStream(str *http3.RequestStream) {
	str.CancelRead(quic.StreamErrorCode(http3.ErrCodeRequestCanceled))
	str.CancelWrite(quic.StreamErrorCode(http3.ErrCodeRequestCanceled))
}

// readBody reads the body to its end into the worker's buffer, hashing it
// when verifying.
func (c *h3Conn) readBody(r io.Reader) (int64, error) {
	var n int64
	for {
		k, err := r.Read(c.buf)
		if k > 0 {
			n += int64(k)
			if c.sum != nil {
				c.sum.Write(c.buf[:k])
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if c.sum != nil {
				c.sum.Reset()
			}
			return n, err
		}
	}
	if c.sum != nil {
		var d [sha256.Size]byte
		ok := string(c.sum.Sum(d[:0])) == string(c.l.lc.r.cfg.VerifySHA256)
		c.sum.Reset()
		if !ok {
			return n, errBodyMismatch
		}
	}
	return n, nil
}

// noteSession reads what a new connection negotiated.
func (c *h3Conn) noteSession(o *h3Out) {
	st := c.qc.ConnectionState()
	o.resumed = st.TLS.DidResume
	o.zeroRTT = st.Used0RTT
	if !st.TLS.HandshakeComplete {
		return
	}
	c.e.noteVersion(st.Version)
	t := st.TLS
	c.e.r.tls.Capture(tlsfd.Session{Version: t.Version, Suite: t.CipherSuite, Curve: t.CurveID, ALPN: t.NegotiatedProtocol, Peer: t.PeerCertificates})
}

// drop closes c's QUIC connection.
func (c *h3Conn) drop() {
	c.qc.CloseWithError(0, "")
	c.l.clearConn(c)
	c.cc = nil
}

// closeAll closes the connection, the transport and the socket.
func (c *h3Conn) closeAll() {
	if c.qc != nil {
		c.drop()
	}
	if c.tr != nil {
		c.tr.Close()
		c.tr = nil
	}
	if c.udp != nil {
		c.udp.Close()
		c.udp = nil
	}
}
