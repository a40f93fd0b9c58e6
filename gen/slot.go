package gen

import (
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/sock"
)

// socketSlot is the socket part of a connection slot, the same for every
// engine on the TCP loop: the descriptor (closed and reopened many times:
// new connection per request, Connection: close or GOAWAY, errors) with a
// generation that tells events of an old socket from the current one, the
// byte stream, the connect and setup phases, and whether the loop counts
// the slot as needing prompt events. The protocol's slot embeds it.
type socketSlot struct {
	idx, gen   int32
	fd         int
	connecting bool
	handshake  bool // the stream's setup (TLS handshake) in progress
	unsettled  bool // counted in the loop's unsettled (see trackSlot)
	connStart  int64
	openedFor  int64 // intended time of the request that opened the socket: its handshake counts in that request's window

	s     sock.Stream // the byte stream of the current socket (nil when closed)
	plain sock.Plain  // s when the target is plain TCP

	later    bool   // in the loop's later list (readLater)
	laterGen int32  // the socket whose read stopped at the budget
	laterEv  uint32 // the event its read began with
}

// dialSlot opens a new socket for ss and starts connecting: connected
// reports a connect that completed at once (call openSock), else the
// slot is connecting until EPOLLOUT.
func (l *tcpLoop) dialSlot(ss *socketSlot, now int64) (connected bool, class ErrorClass, err error) {
	ss.connStart = now
	ss.gen++
	ss.fd, connected, class, err = l.dial(ss)
	if err == nil {
		l.lc.rec.dials++
	}
	if err == nil && !connected {
		ss.connecting = true
	}
	return connected, class, err
}

// openSock chooses the byte stream of a connected socket (plain or TLS)
// and begins its setup.
func (l *tcpLoop) openSock(ss *socketSlot) {
	ss.connecting = false
	ss.s = l.poll.stream(ss)
	ss.handshake = true
}

// advanceSetup runs the stream's setup until it needs the network again.
// Once it is done (at once for a plain socket), took is how long the
// connect and the setup took, ns, when they count as a handshake (TLS, or a
// new connection per request; -1 otherwise): the driver records it. The
// returned now is then fresh.
func (l *tcpLoop) advanceSetup(ss *socketSlot, now int64) (done bool, took, _ int64, err error) {
	done, err = ss.s.Handshake(l.buf)
	if err != nil || !done {
		return false, -1, now, err
	}
	ss.handshake = false
	if l.tls == nil && !l.lc.r.cfg.NewConn {
		return true, -1, now, nil
	}
	now = l.lc.now()
	return true, now - ss.connStart, now, nil
}

// trackSlot keeps the loop's count of slots that need prompt events
// (connecting, in the setup, or with bytes still to write; writing says
// whether the protocol has some): batched pacing sleeps through socket
// events only while there are none.
func (l *tcpLoop) trackSlot(ss *socketSlot, writing bool) {
	u := ss.fd >= 0 && (ss.connecting || ss.handshake || writing || ss.s != nil && ss.s.Pending())
	if u != ss.unsettled {
		ss.unsettled = u
		if u {
			l.unsettled++
		} else {
			l.unsettled--
		}
	}
}

// closeSlot closes ss's socket and releases its stream.
func (l *tcpLoop) closeSlot(ss *socketSlot) {
	l.closeSocket(ss)
	ss.s = nil
	ss.fd = -1
	ss.connecting = false
	ss.handshake = false
}

// slotProto is a protocol's part of the one setup of a connection slot
// (HTTP/1.1 and HTTP/2 alike): the loop runs connect, then the TCP
// connection up, then the stream's setup (a TLS handshake; nothing for a
// plain socket), and tells the protocol at each edge. Slots are named by
// their index in the protocol's list.
type slotProto interface {
	// slotTrack keeps slot idx in the loop's count of slots that need
	// prompt events (trackSlot, with what the protocol has to write).
	slotTrack(idx int32)
	// slotFailed ends slot idx's socket, whose connect or setup failed.
	slotFailed(idx int32, class ErrorClass, err error, now int64)
	// slotOpened says slot idx's TCP connection is up; its stream's setup
	// starts next.
	slotOpened(idx int32)
	// slotReady says slot idx's stream is set up: the protocol's bytes may
	// go.
	slotReady(idx int32, now int64)
	// slotClose closes slot idx's socket (teardown: it has one).
	slotClose(idx int32)
	// slotBegin starts slot idx's first request (closed loop).
	slotBegin(idx int32, now int64)
	// slotOpen reports whether slot idx has a socket.
	slotOpen(idx int32) bool
}

// connectSlot opens a new socket for ss, the slot of the request intended
// at intended, and starts connecting. A connect that fails at once is
// returned: the protocol fails what it owes on the slot.
func (l *tcpLoop) connectSlot(ss *socketSlot, intended, now int64) (ErrorClass, error) {
	ss.openedFor = intended
	connected, class, err := l.dialSlot(ss, now)
	switch {
	case err != nil:
		return class, err
	case connected:
		l.slotConnected(ss, now)
	default:
		l.proto.slotTrack(ss.idx)
	}
	return 0, nil
}

// slotConnected continues after ss's TCP connection is up: the stream is
// chosen (plain or TLS) and set up.
func (l *tcpLoop) slotConnected(ss *socketSlot, now int64) {
	l.proto.slotOpened(ss.idx)
	l.openSock(ss)
	l.setUpSlot(ss, now)
}

// setUpSlot advances ss's stream setup; once it is done (at once for a
// plain socket) the handshake is counted and the protocol takes over.
func (l *tcpLoop) setUpSlot(ss *socketSlot, now int64) {
	done, took, now, err := l.advanceSetup(ss, now)
	if err != nil {
		l.proto.slotFailed(ss.idx, classifyHandshake(err), err, now)
		return
	}
	if !done {
		l.proto.slotTrack(ss.idx)
		return
	}
	l.lc.rec.countHandshake(ss.openedFor, took, ss.s.Resumed())
	l.proto.slotReady(ss.idx, now)
}

// settingUp handles an event ev of ss while it connects or sets up its
// stream, and reports whether it did; false: ss is set up, and the event
// is the protocol's.
func (l *tcpLoop) settingUp(ss *socketSlot, ev uint32, now int64) bool {
	switch {
	case ss.connecting:
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return true
		}
		if err := l.poll.connectResult(ss); err != nil {
			l.proto.slotFailed(ss.idx, classify(err), err, now)
			return true
		}
		l.slotConnected(ss, now)
		return true
	case ss.handshake:
		l.setUpSlot(ss, now)
		return true
	}
	return false
}

// begin: in closed loop every slot starts its first request, until the
// quota is spent.
func (l *tcpLoop) begin(now int64) {
	if l.lc.open {
		return
	}
	for i := 0; i < l.nslots && !l.lc.quotaSpent(); i++ {
		l.proto.slotBegin(int32(i), now)
	}
}

// teardown closes every slot's socket and the loop's descriptors.
func (l *tcpLoop) teardown() {
	for i := 0; i < l.nslots; i++ {
		if l.proto.slotOpen(int32(i)) {
			l.proto.slotClose(int32(i))
		}
	}
	l.closeFds()
}
