package uring

import (
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/loadlab/loadlab/internal/testutil"
	"golang.org/x/sys/unix"
)

// features is probed once for the package's tests.
var features = Probe()

// newRing makes a loop ring on the test's (now locked) thread, or skips the
// test where io_uring is unusable here.
func newRing(t *testing.T) *Ring {
	t.Helper()
	if m := features.Missing(); len(m) > 0 {
		t.Skipf("io_uring: %v", m)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	r, err := New(64, 256, LoopFlags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// bufRing registers a buffer ring the test's cleanup frees.
func bufRing(t *testing.T, r *Ring, group uint16, n, size int) *BufRing {
	t.Helper()
	br, err := r.NewBufRing(group, n, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { br.Close() })
	return br
}

// socketPair is a connected pair of stream sockets the test's cleanup
// closes (closing one end early is fine).
func socketPair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds
}

// echo is a loopback TCP server that writes back what it reads.
func echo(t *testing.T) *testutil.Server {
	return testutil.StartServer(t, func(c net.Conn) { io.Copy(c, c) })
}

// dial connects a raw non-blocking TCP socket to s through the ring.
func dial(t *testing.T, r *Ring, s *testutil.Server) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	sa := &unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte{127, 0, 0, 1}}
	sa.Port = uint16(s.Port>>8) | uint16(s.Port&0xff)<<8
	r.GetSQE().PrepConnect(fd, unsafe.Pointer(sa), unix.SizeofSockaddrInet4, 77)
	c := wait1(t, r)
	if c.UserData != 77 || c.Res != 0 {
		t.Fatalf("connect: user data %d, res %d (%v)", c.UserData, c.Res, Error(c.Res))
	}
	r.Advance(1)
	return fd
}

// wait1 submits and returns the next completion (not yet reaped), within
// 5 s.
func wait1(t *testing.T, r *Ring) *CQE {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := r.SubmitAndWait(1, int64(100*time.Millisecond)); err != nil && err != unix.EINTR {
			t.Fatal(err)
		}
		if c := r.PeekCQE(); c != nil {
			return c
		}
	}
	t.Fatal("no completion within 5s")
	return nil
}

func TestProbe(t *testing.T) {
	if features.Err != nil {
		t.Skipf("io_uring_setup fails here: %v", features.Err)
	}
	t.Log(features.String())
	for _, op := range []int{OpNop, OpSend, OpRecv, OpRecvmsg, OpTimeout, OpConnect, OpClose, OpAsyncCancel} {
		if !features.Op(op) {
			t.Errorf("opcode %d not reported by IORING_REGISTER_PROBE", op)
		}
	}
	if features.Op(200) || features.Op(-1) {
		t.Error("Op answers for opcodes out of range")
	}
}

// A send linked to a receive, its completion skipped: only the receive
// completes, with the echoed bytes.
func TestSendLinkedRecv(t *testing.T) {
	r := newRing(t)
	fd := dial(t, r, echo(t))
	out := []byte("GET / HTTP/1.1\r\n\r\n")
	in := make([]byte, 64)
	s := r.GetSQE()
	s.PrepSend(fd, out, unix.MSG_WAITALL, 1)
	s.Flags |= SqeIOLink | SqeCQESkipSuccess
	r.GetSQE().PrepRecv(fd, in, 0, 2)
	got := 0
	for got < len(out) {
		c := wait1(t, r)
		if c.UserData != 2 {
			t.Fatalf("completion of %d (res %d): the send's should be skipped", c.UserData, c.Res)
		}
		if c.Res <= 0 {
			t.Fatalf("recv: %d (%v)", c.Res, Error(c.Res))
		}
		got += int(c.Res)
		r.Advance(1)
		if got < len(out) {
			r.GetSQE().PrepRecv(fd, in[got:], 0, 2)
		}
	}
	if string(in[:got]) != string(out) {
		t.Fatalf("echo %q, want %q", in[:got], out)
	}
}

// A send that fails posts its completion even with CQE_SKIP_SUCCESS; the
// receive linked to it is cancelled and, the head having skipped its
// success, posts nothing: whoever links with CQE_SKIP_SUCCESS must count
// the link as gone when the head fails.
func TestFailedSendCompletes(t *testing.T) {
	r := newRing(t)
	srv := testutil.StartServer(t, testutil.ResetOnAccept)
	fd := dial(t, r, srv)
	in := make([]byte, 64)
	// Wait for the reset to arrive.
	r.GetSQE().PrepRecv(fd, in, 0, 3)
	if c := wait1(t, r); c.Res >= 0 {
		t.Fatalf("recv on a reset connection: %d", c.Res)
	}
	r.Advance(1)
	s := r.GetSQE()
	s.PrepSend(fd, []byte("x"), unix.MSG_NOSIGNAL, 1)
	s.Flags |= SqeIOLink | SqeCQESkipSuccess
	r.GetSQE().PrepRecv(fd, in, 0, 2)
	c := wait1(t, r)
	if c.UserData != 1 || c.Res >= 0 {
		t.Fatalf("completion %d res %d: want the send's error", c.UserData, c.Res)
	}
	r.Advance(1)
	r.SubmitAndWait(1, int64(50*time.Millisecond))
	if c := r.PeekCQE(); c != nil {
		t.Fatalf("then completion %d res %d: want none", c.UserData, c.Res)
	}
}

// Multishot receive into a buffer ring: every write arrives in a buffer
// of the group, the request staying armed; recycled buffers are reused.
func TestRecvMultishotBufRing(t *testing.T) {
	r := newRing(t)
	br := bufRing(t, r, 1, 4, 64)
	fds := socketPair(t)
	r.GetSQE().PrepRecvMultishot(fds[0], br.Group, 9)
	for i := 0; i < 10; i++ { // more rounds than buffers: recycling works
		msg := []byte{'a' + byte(i), 'b'}
		unix.Write(fds[1], msg)
		c := wait1(t, r)
		id, ok := c.Buffer()
		if !ok || !c.More() || c.Res != 2 || c.UserData != 9 {
			t.Fatalf("round %d: res %d flags %#x: want 2 bytes in a buffer, still armed", i, c.Res, c.Flags)
		}
		if got := br.Buf(id, int(c.Res)); string(got) != string(msg) {
			t.Fatalf("round %d: %q, want %q", i, got, msg)
		}
		r.Advance(1)
		br.Recycle(id)
		br.Publish()
	}
	// The peer's close ends the stream: res 0, not armed any more.
	unix.Shutdown(fds[1], unix.SHUT_WR)
	c := wait1(t, r)
	if c.Res != 0 || c.More() {
		t.Fatalf("at the end: res %d flags %#x, want 0 and no MORE", c.Res, c.Flags)
	}
	r.Advance(1)
}

// A dry buffer group ends a multishot receive with ENOBUFS.
func TestRecvMultishotNoBufs(t *testing.T) {
	r := newRing(t)
	br := bufRing(t, r, 2, 1, 16)
	fds := socketPair(t)
	r.GetSQE().PrepRecvMultishot(fds[0], br.Group, 4)
	unix.Write(fds[1], []byte("one"))
	c := wait1(t, r)
	if c.Res != 3 {
		t.Fatalf("first: %d", c.Res)
	}
	r.Advance(1) // the buffer is not recycled
	unix.Write(fds[1], []byte("two"))
	c = wait1(t, r)
	if c.Res != -int32(unix.ENOBUFS) || c.More() {
		t.Fatalf("with no buffer: res %d flags %#x, want -ENOBUFS, not armed", c.Res, c.Flags)
	}
	r.Advance(1)
}

// Multishot RECVMSG carries each arrival's SO_TIMESTAMPNS, taken when the
// data arrived, not when it was reaped.
func TestRecvmsgMultishotTimestamp(t *testing.T) {
	r := newRing(t)
	br := bufRing(t, r, 3, 4, 256)
	fd := dial(t, r, echo(t))
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	// The first socket to ask turns receive timestamps on in a deferred
	// work item (net_enable_timestamp): give it time to run.
	time.Sleep(20 * time.Millisecond)
	const ctrl = 64
	msg := &unix.Msghdr{Controllen: ctrl}
	r.GetSQE().PrepRecvmsgMultishot(fd, msg, br.Group, 5)
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UnixNano()
	unix.Write(fd, []byte("ping"))
	time.Sleep(30 * time.Millisecond) // reap late
	c := wait1(t, r)
	reaped := time.Now().UnixNano()
	id, ok := c.Buffer()
	if !ok || c.Res <= 0 {
		t.Fatalf("res %d flags %#x", c.Res, c.Flags)
	}
	control, payload, ok := ParseRecvmsg(br.Buf(id, int(c.Res)), 0, ctrl)
	if !ok || string(payload) != "ping" {
		t.Fatalf("payload %q (ok %v)", payload, ok)
	}
	ts := TimestampNs(control)
	if ts < before || ts > reaped-int64(20*time.Millisecond) {
		t.Fatalf("timestamp %d ns after the write, %d before the reap: want the arrival", ts-before, reaped-ts)
	}
	r.Advance(1)
}

// A send linked to a single-shot RECVMSG into a provided buffer (the
// loops' linked receive with a pacing tolerance): the buffer holds only the
// payload, and the kernel writes the receive timestamp into the msghdr's
// own control space and its length back into Controllen.
func TestRecvmsgLinkedTimestamp(t *testing.T) {
	r := newRing(t)
	br := bufRing(t, r, 4, 4, 256)
	fd := dial(t, r, echo(t))
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // see TestRecvmsgMultishotTimestamp
	var ctrl [64]byte
	msg := &unix.Msghdr{Control: &ctrl[0]}
	msg.SetControllen(len(ctrl))
	before := time.Now().UnixNano()
	s := r.GetSQE()
	s.PrepSend(fd, []byte("ping"), unix.MSG_WAITALL|unix.MSG_NOSIGNAL, 1)
	s.Flags |= SqeIOLink | SqeCQESkipSuccess
	s = r.GetSQE()
	s.PrepRecvmsg(fd, msg, 0, 2)
	s.Flags |= SqeBufferSelect
	s.BufIndex = br.Group
	s.Ioprio |= RecvPollFirst
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // reap late
	c := wait1(t, r)
	reaped := time.Now().UnixNano()
	id, ok := c.Buffer()
	if c.UserData != 2 || !ok || c.Res != 4 {
		t.Fatalf("completion %d res %d flags %#x: want the receive's 4 bytes in a buffer", c.UserData, c.Res, c.Flags)
	}
	if got := string(br.Buf(id, int(c.Res))); got != "ping" {
		t.Fatalf("payload %q", got)
	}
	if n := int(msg.Controllen); n == 0 || n > len(ctrl) {
		t.Fatalf("controllen %d: want the kernel's length of what it wrote", msg.Controllen)
	}
	ts := TimestampNs(ctrl[:msg.Controllen])
	if ts < before || ts > reaped-int64(20*time.Millisecond) {
		t.Fatalf("timestamp %d ns after the send, %d before the reap: want the arrival", ts-before, reaped-ts)
	}
	r.Advance(1)
}

// A timeout request wakes a waiting SubmitAndWait after its time, and
// SubmitAndWait's own timeout ends a wait with nothing to reap.
func TestTimeouts(t *testing.T) {
	r := newRing(t)
	ts := new(unix.Timespec)
	*ts = unix.NsecToTimespec(int64(3 * time.Millisecond))
	start := time.Now()
	r.GetSQE().PrepTimeout(ts, 0, 0, 11)
	c := wait1(t, r)
	if el := time.Since(start); c.UserData != 11 || c.Res != -int32(unix.ETIME) || el < 3*time.Millisecond || el > time.Second {
		t.Fatalf("timeout: user data %d res %d after %v", c.UserData, c.Res, el)
	}
	r.Advance(1)
	start = time.Now()
	n, err := r.SubmitAndWait(1, int64(2*time.Millisecond))
	if el := time.Since(start); err != nil && !errors.Is(err, unix.EINTR) || r.Ready() != 0 || n != 0 || (err == nil && el < 2*time.Millisecond) {
		t.Fatalf("empty wait: n %d err %v ready %d after %v", n, err, r.Ready(), el)
	}
}

// Cancel and close through the ring: the pending receive ends with
// -ECANCELED and the peer sees the connection closed.
func TestCancelClose(t *testing.T) {
	r := newRing(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1]) // fds[0] the ring closes
	in := make([]byte, 8)
	r.GetSQE().PrepRecv(fds[0], in, 0, 1)
	r.GetSQE().PrepCancel(1, 2)
	r.GetSQE().PrepClose(fds[0], 3)
	seen := map[uint64]int32{}
	for len(seen) < 3 {
		c := wait1(t, r)
		seen[c.UserData] = c.Res
		r.Advance(1)
	}
	if seen[1] != -int32(unix.ECANCELED) || seen[2] != 0 || seen[3] != 0 {
		t.Fatalf("recv %d, cancel %d, close %d", seen[1], seen[2], seen[3])
	}
	n, err := unix.Read(fds[1], in)
	if n != 0 || err != nil {
		t.Fatalf("peer read after the close: %d %v, want EOF", n, err)
	}
}

// The submit-and-reap path allocates nothing: a request written, echoed
// and received through a buffer ring.
func TestRoundTripAllocs(t *testing.T) {
	r := newRing(t)
	br := bufRing(t, r, 4, 8, 256)
	fd := dial(t, r, echo(t))
	out := []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	r.GetSQE().PrepRecvMultishot(fd, br.Group, 2)
	fail := ""
	allocs := testing.AllocsPerRun(200, func() {
		s := r.NextSQE()
		s.PrepSend(fd, out, unix.MSG_WAITALL|unix.MSG_NOSIGNAL, 1)
		s.Flags |= SqeCQESkipSuccess
		for got := 0; got < len(out); {
			if _, err := r.SubmitAndWait(1, int64(time.Second)); err != nil && err != unix.EINTR {
				fail = err.Error()
				return
			}
			for i, n := uint32(0), r.Ready(); i < n; i++ {
				c := r.CQEAt(i)
				if c.UserData != 2 || c.Res <= 0 || !c.More() {
					fail = "bad completion"
					return
				}
				id, _ := c.Buffer()
				got += int(c.Res)
				br.Recycle(id)
			}
			r.Advance(r.Ready())
			br.Publish()
		}
	})
	if fail != "" {
		t.Fatal(fail)
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per round trip, want 0", allocs)
	}
}

// Free counts the entries GetSQE can still hand out: fewer with each one
// prepared, all again once they are submitted.
func TestFree(t *testing.T) {
	r := newRing(t)
	if got := r.Free(); got != r.SQEntries() {
		t.Fatalf("fresh ring: free %d of %d", got, r.SQEntries())
	}
	for i := uint32(1); i <= r.SQEntries(); i++ {
		r.GetSQE().PrepNop(uint64(i))
		if got := r.Free(); got != r.SQEntries()-i {
			t.Fatalf("%d prepared: free %d", i, got)
		}
	}
	if r.GetSQE() != nil {
		t.Fatal("GetSQE on a full queue")
	}
	if _, err := r.Submit(); err != nil {
		t.Fatal(err)
	}
	if got := r.Free(); got != r.SQEntries() {
		t.Fatalf("after the submission: free %d of %d", got, r.SQEntries())
	}
}
