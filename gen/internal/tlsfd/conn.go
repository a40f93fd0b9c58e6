package tlsfd

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"io"
	"iter"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/sock"

	"github.com/loadlab/loadlab/gen/tls13"
	utls "github.com/refraction-networking/utls"
	"golang.org/x/sys/unix"
)

// TLS on the loop's own non-blocking sockets.
//
// crypto/tls (and uTLS) drive a handshake synchronously from Handshake().
// To keep every connection on its loop's pinned thread without blocking the
// loop, each handshake runs as a coroutine (iter.Pull): when the socket has
// nothing to read, the coroutine yields back to the loop, which resumes it
// on the next epoll event. Coroutine switches stay on the calling OS thread
// (the locked thread is handed over), so the handshake's CPU work happens on
// the loop's CPU.
//
// During the handshake crypto/tls reads through fdConn, which hands over at
// most one TLS record per call, so when Handshake returns nothing past the
// handshake sits in crypto/tls's buffers: the rest is still in the socket.
// The connection then switches to our own record layer (record.go), keyed
// from the secrets crypto/tls writes to a per-connection KeyLogWriter, and
// crypto/tls is dropped. Our layer does not allocate per request; crypto/tls's
// Read allocates once per call.
//
// Exceptions, which keep crypto/tls for the connection's lifetime: TLS 1.2
// suites other than AES-GCM and ChaCha20-Poly1305, and resumed TLS 1.2
// sessions (crypto/tls logs no master secret for those). With --resume and
// TLS 1.3, crypto/tls keeps reading until the first application data, so the
// session tickets the server sends after the handshake reach the session
// cache; then the connection switches (tickets sent later are skipped).
//
// Buffers: records are read into the upper half of the loop's read buffer
// and decrypted into its lower half (no copy of the plaintext, 128 KiB per
// read(2)). A record cut off at the end of a read is copied to a
// per-connection carry buffer (one record, 18 KiB) taken from a per-loop free
// list and returned as soon as the record completes, so carries exist only
// for connections that are in the middle of a record: with small responses
// almost none, with large ones at most one per connection receiving. Requests
// are sealed into a per-loop buffer; what the socket does not take is queued
// per connection (Conn.out), as before. After the switch a connection
// holds its keys and AEAD state, about 2 KiB, instead of crypto/tls's Conn
// and its buffers.

var errAborted = errors.New("handshake abandoned")

// tlsLib is what crypto/tls.Conn and uTLS's UConn have in common here.
type tlsLib interface {
	Handshake() error
	Read([]byte) (int, error)
	Write([]byte) (int, error)
}

// Phases of a Conn.
const (
	phaseHandshake = iota // crypto/tls handshakes through fdConn, or the lean handshake (hs)
	phaseTickets          // TLS 1.3 + --resume: crypto/tls reads until the first application data
	phaseRecords          // our record layer
	phaseLib              // crypto/tls for good
)

// Loop is one loop's TLS scratch space: the buffer requests are sealed
// into and the free carry buffers of its connections; with the lean
// handshake, the loop's tls13 Client (its key pairs, its ClientHello) and
// free lists of handshakes and Conns, so that a handshake in steady state
// allocates nothing of its own.
type Loop struct {
	client *Client
	rx     *rawio.RxReader // batched pacing: records are read with their receive timestamps
	seal   []byte
	carry  [][]byte

	lean    *tls13.Client
	leanErr error
	hsFree  []*tls13.Handshake
	secFree []*Conn
}

func (t *Loop) getCarry() []byte {
	if n := len(t.carry); n > 0 {
		b := t.carry[n-1]
		t.carry = t.carry[:n-1]
		return b[:0]
	}
	return make([]byte, 0, maxRecordLen)
}

func (t *Loop) putCarry(b []byte) { t.carry = append(t.carry, b) }

// Conn is a TLS session over one of the loop's sockets. Not safe for
// concurrent use: only its loop touches it.
type Conn struct {
	fd    int
	via   Transport // nil: fd's own system calls
	tl    *Loop
	phase uint8

	// crypto/tls or uTLS: the handshake, and the records in phaseTickets
	// and phaseLib; nil in phaseRecords.
	lib tlsLib
	std *tls.Conn
	uc  *utls.UConn

	rec     *recordLayer
	nextRec *recordLayer // phaseTickets: the layer to switch to
	carry   []byte       // the start of a partial record, nil when none
	err     error        // sticky read error: io.EOF after close_notify or FIN, or fatal

	out []byte // bytes the socket did not take yet

	// handshake coroutine
	yield func(struct{}) bool
	next  func() (struct{}, bool)
	stop  func()
	hsErr error

	keys *keyLog // secrets of this connection, until the switch
	fdc  fdState

	started    bool   // the handshake has begun
	wasResumed bool   // the handshake resumed a session
	proto      string // the ALPN protocol the server selected ("" for none)

	// lean handshake
	hs  *tls13.Handshake // the handshake in progress, until noted
	own recordLayer      // the record layer, reused with the Conn
}

// Transport is the socket under a Conn when it is not fd's own system
// calls (the loops' io_uring): Read as read(2) on a non-blocking socket
// (unix.EAGAIN when it has nothing, (0, nil) at the end of the stream),
// Write takes what it can (all of b, on the ring) or fails.
type Transport interface {
	Read(b []byte) (int, error)
	Write(b []byte) (int, error)
}

// NewConnVia is NewConn over via instead of fd's system calls (fd is
// still the socket's descriptor).
func (tl *Loop) NewConnVia(fd int, via Transport) *Conn {
	s := tl.NewConn(fd)
	s.via = via
	return s
}

// readSock reads ciphertext from the socket; stamped reads keep the
// receive timestamp (batched pacing) on the epoll path (a Transport keeps
// its own).
func (s *Conn) readSock(b []byte, stamped bool) (int, error) {
	switch {
	case s.via != nil:
		return s.via.Read(b)
	case stamped && s.tl.rx != nil:
		return s.tl.rx.Read(s.fd, b)
	}
	return rawio.Read(s.fd, b)
}

// writeSock writes to the socket.
func (s *Conn) writeSock(b []byte) (int, error) {
	if s.via != nil {
		return s.via.Write(b)
	}
	return rawio.Write(s.fd, b)
}

// NewConn returns the TLS stream of a freshly connected socket fd; the
// handshake starts with its first Handshake call.
func (tl *Loop) NewConn(fd int) *Conn {
	c := tl.client
	if c.Lean != nil {
		return tl.leanSecure(fd)
	}
	if c.Std != nil {
		return newSecureStd(fd, tl, c.Std)
	}
	return newSecureUTLS(fd, tl, c.UTLS, c.freshSpec())
}

func newSecureStd(fd int, tl *Loop, base *tls.Config) *Conn {
	s := &Conn{fd: fd, tl: tl, keys: &keyLog{}}
	cfg := base.Clone()
	cfg.KeyLogWriter = s.keys
	s.std = tls.Client(fdConn{s}, cfg)
	s.lib = s.std
	return s
}

func newSecureUTLS(fd int, tl *Loop, base *utls.Config, spec *utls.ClientHelloSpec) *Conn {
	s := &Conn{fd: fd, tl: tl, keys: &keyLog{}}
	cfg := base.Clone()
	cfg.KeyLogWriter = s.keys
	s.uc = utls.UClient(fdConn{s}, cfg, utls.HelloCustom)
	s.uc.ApplyPreset(spec) //nolint:errcheck // the preset was checked (utls.UTLSIdToSpec) when the run was configured
	s.lib = s.uc
	return s
}

func (s *Conn) handshakeSeq(yield func(struct{}) bool) {
	s.yield = yield
	s.hsErr = s.lib.Handshake()
	s.yield = nil
}

// step runs the handshake until it needs the network again. ended reports
// that the handshake is over, with its outcome in s.hsErr; err is a socket
// error while flushing.
func (s *Conn) step() (ended bool, err error) {
	if err := s.Flush(); err != nil {
		return false, err
	}
	if _, more := s.next(); more {
		return false, s.Flush()
	}
	s.stop()
	s.next, s.stop = nil, nil
	return true, nil
}

func (s *Conn) state() Session {
	if s.std != nil {
		st := s.std.ConnectionState()
		return Session{st.Version, st.CipherSuite, st.CurveID, st.NegotiatedProtocol, st.DidResume, st.PeerCertificates}
	}
	st := s.uc.ConnectionState()
	return Session{st.Version, st.CipherSuite, 0, st.NegotiatedProtocol, st.DidResume, st.PeerCertificates}
}

// afterHandshake picks the record layer for the rest of the connection.
// resume is whether session tickets matter (--resume).
func (s *Conn) afterHandshake(vers, suite uint16, resume bool) {
	keys := s.keys
	s.keys = nil
	rec, err := keys.recordLayer(vers, suite, s.fdc.serverRandom())
	if err != nil || rec == nil || !s.fdc.atBoundary() {
		s.phase = phaseLib
		return
	}
	if vers == tls.VersionTLS12 {
		// Each side's Finished was the first record under the new keys.
		rec.in.seq, rec.out.seq = s.fdc.in.sinceCCS, s.fdc.out.sinceCCS
	}
	if vers == tls.VersionTLS13 && resume {
		s.fdc.in.sinceCCS, s.fdc.out.sinceCCS = 0, 0
		s.nextRec = rec
		s.phase = phaseTickets
		return
	}
	s.useRecords(rec)
}

// useRecords switches to our record layer and lets crypto/tls go.
func (s *Conn) useRecords(rec *recordLayer) {
	s.rec, s.nextRec = rec, nil
	s.phase = phaseRecords
	s.lib, s.std, s.uc = nil, nil, nil
}

// The sock.Stream methods: TLS is the byte stream of its connection.

func (s *Conn) Pending() bool           { return len(s.out) > 0 }
func (s *Conn) DrainsOnShortRead() bool { return false }

// View reads into b (the records are decrypted into it).
func (s *Conn) View(b []byte) ([]byte, error) { return sock.ReadView(s, b) }
func (s *Conn) Resumed() bool                 { return s.wasResumed }

// read is recv with the end of the stream as (0, nil), as on a plain socket.
func (s *Conn) Read(b []byte) (int, error) {
	n, err := s.recv(b)
	if err != nil && isEOF(err) {
		return 0, nil
	}
	return n, err
}

// flush writes queued bytes; a short write leaves the rest queued.
func (s *Conn) Flush() error {
	for len(s.out) > 0 {
		n, err := s.writeSock(s.out)
		if err == unix.EAGAIN {
			return nil
		}
		if err != nil {
			return err
		}
		s.out = s.out[:copy(s.out, s.out[n:])]
	}
	return nil
}

// send writes b now, or queues it behind what is already queued; what the
// socket does not take is queued. Sending never blocks.
func (s *Conn) send(b []byte) error {
	if len(s.out) > 0 {
		s.out = append(s.out, b...)
		return nil
	}
	n, err := s.writeSock(b)
	if err == unix.EAGAIN {
		n, err = 0, nil
	}
	if err != nil {
		return err
	}
	if n < len(b) {
		s.out = append(s.out, b[n:]...)
	}
	return nil
}

// sendReply sends what the read side must answer (a KeyUpdate), unless
// sock.MaxQueued bytes or more stay queued after a flush: a server that
// asks for answers and does not read them ends the connection instead of
// growing the queue.
func (s *Conn) sendReply(b []byte) error {
	if len(s.out) >= sock.MaxQueued {
		if err := s.Flush(); err != nil {
			return err
		}
		if len(s.out) >= sock.MaxQueued {
			return errRepliesUnread
		}
	}
	return s.send(b)
}

// write sends application data. It takes all of b (what the socket does
// not take is queued and flushed on EPOLLOUT), or nothing (EAGAIN) while
// sock.MaxQueued bytes or more stay queued after a flush.
func (s *Conn) Write(b []byte) (int, error) {
	if len(s.out) >= sock.MaxQueued {
		if err := s.Flush(); err != nil {
			return 0, err
		}
		if len(s.out) >= sock.MaxQueued {
			return 0, unix.EAGAIN
		}
	}
	if s.rec == nil {
		return s.lib.Write(b)
	}
	if len(s.out) > 0 {
		s.out = s.rec.seal(s.out, typeApplicationData, b)
		return len(b), nil
	}
	buf := s.rec.seal(s.tl.seal[:0], typeApplicationData, b)
	s.tl.seal = buf[:0]
	return len(b), s.send(buf)
}

// recv returns application data in b. It returns sock.ErrWouldBlock once the
// socket is empty, io.EOF at close_notify or FIN, and never (0, nil).
func (s *Conn) recv(b []byte) (int, error) {
	switch s.phase {
	case phaseRecords:
		return s.readRecords(b)
	case phaseTickets:
		return s.readTickets(b)
	}
	s.fdc.libReading = true
	n, err := s.lib.Read(b)
	s.fdc.libReading = false
	return n, err
}

// readRecords reads ciphertext into the upper half of b (after the carried
// partial record, if any) and decrypts it straight into the lower half, so
// the plaintext lands at the front of b without being moved: one read(2) per
// call while it yields application data.
func (s *Conn) readRecords(b []byte) (int, error) {
	if len(b) < 4*maxRecordLen {
		return 0, errReadBufferSmall
	}
	half := len(b) / 2
	in := b[half:]
	for {
		if s.err != nil {
			return 0, s.err
		}
		k := copy(in, s.carry)
		var n int
		var err error
		n, err = s.readSock(in[k:], true)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return 0, sock.ErrWouldBlock // the carry, if any, stays
		case err != nil:
			return 0, err
		case n == 0:
			s.err = io.EOF
			if k > 0 {
				s.err = io.ErrUnexpectedEOF // FIN in the middle of a record
			}
			s.dropCarry()
			return 0, s.err
		}
		w, used, err := s.rec.open(b[:half], in[:k+n])
		if err != nil {
			s.err = err
			s.dropCarry()
		} else if used < k+n {
			if s.carry == nil {
				s.carry = s.tl.getCarry()
			}
			s.carry = append(s.carry[:0], in[used:k+n]...)
		} else {
			s.dropCarry()
		}
		if len(s.rec.reply) > 0 {
			if err := s.sendReply(s.rec.reply); err != nil && s.err == nil {
				s.err = err
			}
			s.rec.reply = s.rec.reply[:0]
		}
		if w > 0 {
			return w, nil
		}
	}
}

func (s *Conn) dropCarry() {
	if s.carry != nil {
		s.tl.putCarry(s.carry)
		s.carry = nil
	}
}

// readTickets reads through crypto/tls until the first application data,
// then switches to our record layer, its sequence numbers counted by fdConn.
func (s *Conn) readTickets(b []byte) (int, error) {
	s.fdc.libReading = true
	n, err := s.lib.Read(b)
	s.fdc.libReading = false
	if s.phase == phaseTickets && n > 0 && n < len(b) && err == nil && s.fdc.atBoundary() {
		rec := s.nextRec
		rec.in.seq, rec.out.seq = s.fdc.in.sinceCCS, s.fdc.out.sinceCCS
		s.useRecords(rec)
	}
	return n, err
}

// release ends an unfinished handshake and returns buffers; a lean
// Conn goes back to its loop's free list.
func (s *Conn) Release() {
	if s.stop != nil {
		s.stop()
		s.stop, s.next = nil, nil
	}
	s.dropCarry()
	if s.tl.lean != nil {
		s.releaseHandshake()
		s.tl.secFree = append(s.tl.secFree, s)
	}
}

// keyLog takes crypto/tls's key log lines (NSS format) for one connection.
type keyLog struct {
	clientRandom  []byte
	clientTraffic []byte // TLS 1.3 application traffic secrets
	serverTraffic []byte
	master        []byte // TLS 1.2
}

func (k *keyLog) Write(line []byte) (int, error) {
	f := bytes.Fields(line)
	if len(f) != 3 {
		return len(line), nil
	}
	cr, err1 := hex.DecodeString(string(f[1]))
	secret, err2 := hex.DecodeString(string(f[2]))
	if err1 != nil || err2 != nil {
		return len(line), nil //nolint:nilerr // crypto/tls must not see a key log error: a line we cannot read leaves the connection on crypto/tls
	}
	switch string(f[0]) {
	case "CLIENT_TRAFFIC_SECRET_0":
		k.clientTraffic = secret
	case "SERVER_TRAFFIC_SECRET_0":
		k.serverTraffic = secret
	case "CLIENT_RANDOM":
		k.master = secret
	default:
		return len(line), nil
	}
	k.clientRandom = cr
	return len(line), nil
}

// recordLayer builds the client's record layer, or returns nil when the
// version, suite or the logged secrets do not allow it.
func (k *keyLog) recordLayer(vers, suite uint16, serverRandom []byte) (*recordLayer, error) {
	if _, ok := cipherSpecFor(vers, suite); !ok {
		return nil, nil
	}
	switch vers {
	case tls.VersionTLS13:
		if k.clientTraffic == nil || k.serverTraffic == nil {
			return nil, nil
		}
		return newRecordLayer13(suite, k.serverTraffic, k.clientTraffic)
	case tls.VersionTLS12:
		if k.master == nil || serverRandom == nil {
			return nil, nil
		}
		return newRecordLayer12(suite, k.master, k.clientRandom, serverRandom, true)
	}
	return nil, nil
}

func isEOF(err error) bool { return err == io.EOF || errors.Is(err, io.EOF) }

// handshake runs the TLS handshake until it needs the network again: the
// first call sends the ClientHello (the lean handshake) or starts crypto/tls's
// handshake as a coroutine (iter.Pull), later calls go on from what the
// socket has. Once it is done the session is noted (negotiated parameters,
// resumption) and the connection switches to its record layer. The lean
// handshake's Finished flight stays queued: it leaves in one write with the
// first request, which the connection flushes.
func (s *Conn) Handshake(buf []byte) (done bool, err error) {
	if !s.started {
		s.started = true
		if s.tl.lean != nil || s.tl.leanErr != nil {
			// The ClientHello is sent; the server's answer comes with EPOLLIN.
			return false, s.startLean()
		}
		s.next, s.stop = iter.Pull(s.handshakeSeq)
	}
	var ended bool
	if s.hs != nil {
		ended, err = s.stepLean(buf)
	} else {
		ended, err = s.step()
	}
	if err != nil || !ended {
		return false, err
	}
	if err := s.hsErr; err != nil {
		return false, err
	}
	if s.hs == nil {
		if err := s.Flush(); err != nil {
			return false, err
		}
	}
	s.noteSession()
	if want := s.tl.client.ALPN; want == "h2" && s.proto != want {
		return false, errNoH2(s.proto)
	}
	return true, nil
}

// errNoH2 is the failure of a TLS connection that did not negotiate h2 for
// an HTTP/2 run (HTTP/1.1 runs accept a server that selects no protocol).
func errNoH2(got string) error {
	if got == "" {
		got = "none"
	}
	return newError("tls: the server did not select ALPN h2 (selected: " + got + "): it does not offer HTTP/2 over TLS on this port")
}

// noteSession captures the negotiated parameters, notes a resumption and
// switches the connection to its record layer.
func (s *Conn) noteSession() {
	c := s.tl.client
	if s.hs != nil {
		s.proto = s.hs.ALPN()
		s.tl.captureLean(s.hs)
		s.releaseHandshake()
		return
	}
	st := s.state()
	s.proto = st.ALPN
	s.wasResumed = st.Resumed
	if o := c.Observer; o != nil && !o.Captured() {
		o.Capture(st)
	}
	s.afterHandshake(st.Version, st.Suite, c.Resume)
}
