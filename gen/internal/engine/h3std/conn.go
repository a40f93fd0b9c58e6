package h3std

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// newConn makes connection slot idx of l.
func (l *loop) newConn(idx int, req *http.Request, verify bool) *conn {
	c := &conn{l: l, e: l.e, idx: idx, work: make(chan job, 1), req: req, buf: make([]byte, bufSize), tls: l.e.tlsConf}
	if l.LC.R.Spec.TLS.Resume {
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
func (c *conn) worker() {
	l := c.l
	defer l.workers.Done()
	defer c.closeAll()
	if !l.LC.R.Begun() {
		return
	}
	if !l.LC.Open {
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
func (c *conn) do(job job) {
	l := c.l
	o := &c.out
	*o = outcome{intended: job.intended}
	o.started = l.LC.Now()
	// The timeout runs from here, through the dial and the exchange.
	deadline := l.LC.R.Start.Add(time.Duration(o.started) + l.LC.R.Spec.Timeout)
	if c.qc != nil && c.qc.Context().Err() != nil {
		c.drop() // the server closed it while idle: not an error, reconnect
	}
	if c.qc == nil && !c.dial(o, deadline) {
		o.failed = l.LC.Now()
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
			o.failed = l.LC.Now()
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
		o.done = l.LC.Now()
	} else {
		o.failed = l.LC.Now()
		o.class, o.err = classify(err)
	}
	if o.handshake && c.qc != nil {
		c.noteSession(o)
	}
	if c.qc != nil && (l.LC.R.Spec.NewConn || c.qc.Context().Err() != nil) {
		c.drop()
	}
}

// dial opens a new QUIC connection: a full handshake, or a resumed one
// when TLS.Resume left a session ticket, with early data when TLS.ZeroRTT.
func (c *conn) dial(o *outcome, deadline time.Time) bool {
	l, e := c.l, c.e
	t0 := l.LC.Now()
	ctx, cancel := context.WithDeadline(l.ctx, deadline)
	var qc *quic.Conn
	var err error
	if l.LC.R.Spec.TLS.ZeroRTT {
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
		o.class, o.err = classify(err)
		return false
	}
	o.handshake = true
	o.handshakeNs = l.LC.Now() - t0
	if !l.setConn(c, qc) {
		qc.CloseWithError(0, "")
		o.class, o.err = run.ClassOther, errRunEnded
		return false
	}
	c.cc = e.h3t.NewClientConn(qc)
	return true
}

// after0RTTRejected makes the connection usable after the server refused
// 0-RTT (quic-go resets its streams; HTTP/3 needs a new control stream).
func (c *conn) after0RTTRejected(deadline time.Time) error {
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
func (c *conn) exchange(o *outcome, deadline time.Time) error {
	o.written = c.l.LC.Now()
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
func (c *conn) exchangeBody(o *outcome, deadline time.Time) error {
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
func (c *conn) readBody(r io.Reader) (int64, error) {
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
		ok := string(c.sum.Sum(d[:0])) == string(c.l.LC.R.Spec.VerifySHA256)
		c.sum.Reset()
		if !ok {
			return n, run.ErrBodyMismatch
		}
	}
	return n, nil
}

// noteSession reads what a new connection negotiated.
func (c *conn) noteSession(o *outcome) {
	st := c.qc.ConnectionState()
	o.resumed = st.TLS.DidResume
	o.zeroRTT = st.Used0RTT
	if !st.TLS.HandshakeComplete {
		return
	}
	c.e.noteVersion(st.Version)
	c.e.r.TLS.CaptureState(st.TLS)
}

// drop closes c's QUIC connection.
func (c *conn) drop() {
	c.qc.CloseWithError(0, "")
	c.l.clearConn(c)
	c.cc = nil
}

// closeAll closes the connection, the transport and the socket.
func (c *conn) closeAll() {
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
