package tcploop

import (
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/run"
)

// dialSlot opens a new socket for ss and starts connecting: connected
// reports a connect that completed at once (call openSock), else the
// slot is connecting until EPOLLOUT.
func (l *Loop) dialSlot(ss *Slot, now int64) (connected bool, class run.ErrorClass, err error) {
	ss.connStart = now
	ss.Gen++
	ss.Fd, connected, class, err = l.dial(ss)
	if err == nil {
		l.LC.Rec.Dials++
	}
	if err == nil && !connected {
		ss.Connecting = true
	}
	return connected, class, err
}

// openSock chooses the byte stream of a connected socket (plain or TLS)
// and begins its setup.
func (l *Loop) openSock(ss *Slot) {
	ss.Connecting = false
	ss.S = l.poll.stream(ss)
	ss.Handshake = true
}

// advanceSetup runs the stream's setup until it needs the network again.
// Once it is done (at once for a plain socket), took is how long the
// connect and the setup took, ns, when they count as a handshake (TLS, or a
// new connection per request; -1 otherwise): the driver records it. The
// returned now is then fresh.
func (l *Loop) advanceSetup(ss *Slot, now int64) (done bool, took, _ int64, err error) {
	done, err = ss.S.Handshake(l.Buf)
	if err != nil || !done {
		return false, -1, now, err
	}
	ss.Handshake = false
	if l.tls == nil && !l.LC.R.Spec.NewConn {
		return true, -1, now, nil
	}
	now = l.LC.Now()
	return true, now - ss.connStart, now, nil
}

// TrackSlot keeps the loop's count of slots that need prompt events
// (connecting, in the setup, or with bytes still to write; writing says
// whether the protocol has some): batched pacing sleeps through socket
// events only while there are none.
func (l *Loop) TrackSlot(ss *Slot, writing bool) {
	u := ss.Fd >= 0 && (ss.Connecting || ss.Handshake || writing || ss.S != nil && ss.S.Pending())
	if u != ss.Unsettled {
		ss.Unsettled = u
		if u {
			l.Unsettled++
		} else {
			l.Unsettled--
		}
	}
}

// CloseSlot closes ss's socket and releases its stream.
func (l *Loop) CloseSlot(ss *Slot) {
	l.closeSocket(ss)
	ss.S = nil
	ss.Fd = -1
	ss.Connecting = false
	ss.Handshake = false
}

// ConnectSlot opens a new socket for ss, the slot of the request intended
// at intended, and starts connecting. A connect that fails at once is
// returned: the protocol fails what it owes on the slot.
func (l *Loop) ConnectSlot(ss *Slot, intended, now int64) (run.ErrorClass, error) {
	ss.openedFor = intended
	connected, class, err := l.dialSlot(ss, now)
	switch {
	case err != nil:
		return class, err
	case connected:
		l.slotConnected(ss, now)
	default:
		l.proto.SlotTrack(ss.Idx)
	}
	return 0, nil
}

// slotConnected continues after ss's TCP connection is up: the stream is
// chosen (plain or TLS) and set up.
func (l *Loop) slotConnected(ss *Slot, now int64) {
	l.proto.SlotOpened(ss.Idx)
	l.openSock(ss)
	l.setUpSlot(ss, now)
}

// setUpSlot advances ss's stream setup; once it is done (at once for a
// plain socket) the handshake is counted and the protocol takes over.
func (l *Loop) setUpSlot(ss *Slot, now int64) {
	done, took, now, err := l.advanceSetup(ss, now)
	if err != nil {
		l.proto.SlotFailed(ss.Idx, run.ClassifyHandshake(err), err, now)
		return
	}
	if !done {
		l.proto.SlotTrack(ss.Idx)
		return
	}
	l.LC.Rec.CountHandshake(ss.openedFor, took, ss.S.Resumed())
	l.proto.SlotReady(ss.Idx, now)
}

// SettingUp handles an event ev of ss while it connects or sets up its
// stream, and reports whether it did; false: ss is set up, and the event
// is the protocol's.
func (l *Loop) SettingUp(ss *Slot, ev uint32, now int64) bool {
	switch {
	case ss.Connecting:
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return true
		}
		if err := l.poll.connectResult(ss); err != nil {
			l.proto.SlotFailed(ss.Idx, run.Classify(err), err, now)
			return true
		}
		l.slotConnected(ss, now)
		return true
	case ss.Handshake:
		l.setUpSlot(ss, now)
		return true
	}
	return false
}

// Begin: in closed loop every slot starts its first request, until the
// quota is spent.
func (l *Loop) Begin(now int64) {
	if l.LC.Open {
		return
	}
	for i := 0; i < l.nslots && !l.LC.QuotaSpent(); i++ {
		l.proto.SlotBegin(int32(i), now)
	}
}

// Teardown closes every slot's socket and the loop's descriptors.
func (l *Loop) Teardown() {
	for i := 0; i < l.nslots; i++ {
		if l.proto.SlotOpen(int32(i)) {
			l.proto.SlotClose(int32(i))
		}
	}
	l.CloseFds()
}
