// Command floor is the kernel's floor for a closed-loop HTTP/1.1 load: the
// least a client can do on the same traffic. It writes a serialized request
// on each of its connections and reads the response, knowing only its
// length (learnt once, before the run, from one ordinary request), with no
// parsing, no timing and no recording: the cost that is left is the
// kernel's loopback TCP path, the event loop's system calls and the reads.
// scripts/bench-gen.sh runs it beside loadlab, wrk and h2load.
//
// One thread, pinned by the caller (taskset), over epoll (edge-triggered,
// read to EAGAIN) or io_uring (one ring, multishot receive into a provided
// buffer ring, sends that post no completion, one io_uring_enter per
// wakeup that submits and waits). -io uring-link is io_uring with each
// send linked to a single-shot receive (IOSQE_IO_LINK, the send's
// completion skipped), as loadlab's HTTP/1.1 loops do: a receive that
// fills its buffer (a large response) turns the socket's receive
// multishot, and its later sends are unlinked.
//
// With -h2 it is the floor of a closed-loop HTTP/2 load instead (h2c, -c
// connections x -m streams, over epoll; see h2.go), for scripts/bench-h2.sh.
//
// Usage: floor -io epoll|uring|uring-link -c 50 -d 10s http://127.0.0.1:PORT/path
//
//	floor -h2 -c 10 -m 10 -n 200000 -d 60s http://127.0.0.1:PORT/path
//
// -n (HTTP/2 only) stops after that many requests have ended; -d bounds the
// run either way.
// Output: one line "ok N errors E bytes B seconds S" (ok = responses).
//
// Imports: a measurement tool, not part of loadlab's commands: only
// internal/uring among loadlab's packages; nothing imports it.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"github.com/loadlab/loadlab/internal/uring"
	"golang.org/x/sys/unix"
)

func main() {
	io := flag.String("io", "epoll", "epoll, uring or uring-link")
	conns := flag.Int("c", 50, "connections")
	dur := flag.Duration("d", 10*time.Second, "duration")
	h2 := flag.Bool("h2", false, "HTTP/2 (h2c) instead of HTTP/1.1")
	streams := flag.Int("m", 10, "streams in flight per connection (-h2)")
	n := flag.Int64("n", 0, "requests, then stop (-h2; 0: until -d)")
	flag.Parse()
	if flag.NArg() != 1 || *conns < 1 || *dur <= 0 || (*io != "epoll" && *io != "uring" && *io != "uring-link") || *streams < 1 || *n < 0 ||
		(!*h2 && *n != 0) {
		fmt.Fprintln(os.Stderr, "usage: floor -io epoll|uring|uring-link -c N -d DURATION http://127.0.0.1:PORT/path\n"+
			"       floor -h2 [-io epoll] -c N -m STREAMS [-n REQUESTS] -d DURATION http://127.0.0.1:PORT/path")
		os.Exit(2)
	}
	if *h2 {
		os.Exit(mainH2(*io, *conns, *streams, *n, *dur))
	}
	t, err := newTarget(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	runtime.LockOSThread()
	var st stats
	start := time.Now()
	if *io == "epoll" {
		err = runEpoll(t, *conns, start.Add(*dur), &st)
	} else {
		err = runUring(t, *conns, start.Add(*dur), *io == "uring-link", &st)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Printf("ok %d errors %d bytes %d seconds %.3f\n", st.ok, st.errors, st.bytes, time.Since(start).Seconds())
}

// mainH2 runs the HTTP/2 floor and returns the exit code.
func mainH2(io string, conns, streams int, n int64, dur time.Duration) int {
	if io != "epoll" {
		fmt.Fprintln(os.Stderr, "floor:", errH2Uring)
		return 2
	}
	t, err := newH2Target(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return 1
	}
	runtime.LockOSThread()
	var st stats
	start := time.Now()
	if err := runH2Epoll(t, conns, streams, n, start.Add(dur), &st); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		return 1
	}
	fmt.Printf("ok %d errors %d bytes %d seconds %.3f\n", st.ok, st.errors, st.bytes, time.Since(start).Seconds())
	return 0
}

type stats struct{ ok, errors, bytes int64 }

// target is what the loops need: the address, the serialized request and
// the length of its response.
type target struct {
	sa      unix.RawSockaddrInet4
	addr    unix.SockaddrInet4
	req     []byte
	respLen int
}

// newTarget serializes the request and learns the response's length with
// one request on an ordinary connection (every response of a static file
// is as long: the Date header is fixed-width).
func newTarget(raw string) (*target, error) {
	u, addr, err := parseURL(raw)
	if err != nil {
		return nil, err
	}
	t := &target{addr: addr, req: []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\n\r\n")}
	t.sa = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: t.addr.Addr}
	t.sa.Port = uint16(addr.Port>>8) | uint16(addr.Port&0xff)<<8
	c, err := net.Dial("tcp4", u.Host)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write(t.req); err != nil {
		return nil, err
	}
	br := bufio.NewReader(c)
	n := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading the first response: %w", err)
		}
		n += len(line)
		if line == "\r\n" {
			break
		}
		if len(line) > 16 && http.CanonicalHeaderKey(line[:14]) == "Content-Length" {
			v, err := strconv.Atoi(trim(line[15:]))
			if err != nil {
				return nil, fmt.Errorf("content-length %q", line)
			}
			t.respLen = v
		}
	}
	if t.respLen == 0 {
		return nil, errors.New("the response has no Content-Length")
	}
	t.respLen += n
	return t, nil
}

// parseURL takes an http://IPv4:PORT/path URL apart.
func parseURL(raw string) (*url.URL, unix.SockaddrInet4, error) {
	var sa unix.SockaddrInet4
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" {
		return nil, sa, fmt.Errorf("want an http://IPv4:PORT/path URL (-h2: h2c), got %q", raw)
	}
	ap, err := net.ResolveTCPAddr("tcp4", u.Host)
	if err != nil || ap.IP.To4() == nil {
		return nil, sa, fmt.Errorf("want an IPv4 address: %q", u.Host)
	}
	copy(sa.Addr[:], ap.IP.To4())
	sa.Port = ap.Port
	return u, sa, nil
}

func trim(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == '\r' || s[len(s)-1] == '\n') {
		if s[0] == ' ' {
			s = s[1:]
		} else {
			s = s[:len(s)-1]
		}
	}
	return s
}

func socket() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	}
	return fd, err
}

// ---- epoll -------------------------------------------------------------

func rawWrite(fd int, b []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func rawRead(fd int, b []byte) (int, unix.Errno) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return int(n), e
}

func runEpoll(t *target, conns int, end time.Time, st *stats) error {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return err
	}
	fds := make([]int, conns)
	left := make([]int, conns) // response bytes still to read
	for i := range fds {
		if fds[i], err = socket(); err != nil {
			return err
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLET, Fd: int32(i)}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fds[i], &ev); err != nil {
			return err
		}
		if err := unix.Connect(fds[i], &t.addr); err != nil && err != unix.EINPROGRESS {
			return err
		}
		left[i] = -1 // connecting
	}
	events := make([]unix.EpollEvent, 512)
	buf := make([]byte, 256<<10)
	send := func(i int) bool {
		if n, e := rawWrite(fds[i], t.req); e != 0 || n != len(t.req) {
			st.errors++
			return false
		}
		left[i] = t.respLen
		return true
	}
	for open := conns; open > 0 && time.Now().Before(end); {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_WAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 100, 0, 0)
		if e != 0 {
			continue
		}
		for _, ev := range events[:n] {
			i := int(ev.Fd)
			if left[i] == -1 {
				if ev.Events&unix.EPOLLOUT != 0 && send(i) {
					continue
				}
				left[i], open = -2, open-1
				continue
			}
			for left[i] > 0 {
				r, e := rawRead(fds[i], buf)
				if e == unix.EAGAIN {
					break
				}
				if e != 0 || r == 0 {
					st.errors++
					left[i], open = -2, open-1
					break
				}
				st.bytes += int64(r)
				left[i] -= r
				if left[i] == 0 {
					st.ok++
					send(i)
				}
			}
		}
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	return unix.Close(epfd)
}

// ---- io_uring -------------------------------------------------------------

const (
	opConnect = iota
	opRecv
	opSend
	bufCount = 1024
	bufSize  = 32 << 10
)

func runUring(t *target, conns int, end time.Time, link bool, st *stats) error {
	r, err := uring.New(uint32(nextPow2(2*conns+8)), uint32(nextPow2(4*conns+64)), uring.LoopFlags)
	if err != nil {
		return err
	}
	defer r.Close()
	br, err := r.NewBufRing(0, bufCount, bufSize)
	if err != nil {
		return err
	}
	defer br.Close()
	fds := make([]int, conns)
	left := make([]int, conns)
	multi := make([]bool, conns) // the socket's receive is multishot
	for i := range fds {
		if fds[i], err = socket(); err != nil {
			return err
		}
		r.NextSQE().PrepConnect(fds[i], unsafe.Pointer(&t.sa), unix.SizeofSockaddrInet4, ud(opConnect, i))
		multi[i] = !link
	}
	// once is a single-shot receive into the buffer ring (link).
	once := func(i int, s *uring.SQE, fresh bool) {
		s.PrepRecv(fds[i], nil, 0, ud(opRecv, i))
		s.Flags |= uring.SqeBufferSelect
		s.BufIndex = br.Group
		if fresh {
			s.Ioprio |= uring.RecvPollFirst // it follows the send: nothing came yet
		}
	}
	arm := func(i int) {
		if multi[i] {
			r.NextSQE().PrepRecvMultishot(fds[i], br.Group, ud(opRecv, i))
		} else {
			once(i, r.NextSQE(), false)
		}
	}
	send := func(i int) {
		if !multi[i] && r.Free() < 2 {
			// The link and its receive must go in one submission.
			if _, err := r.Submit(); err != nil || r.Free() < 2 {
				multi[i] = true // no room: this socket receives multishot from now on
				arm(i)
			}
		}
		s := r.NextSQE()
		s.PrepSend(fds[i], t.req, unix.MSG_WAITALL|unix.MSG_NOSIGNAL, ud(opSend, i))
		s.Flags |= uring.SqeCQESkipSuccess
		if !multi[i] {
			s.Flags |= uring.SqeIOLink
			once(i, r.NextSQE(), true)
		}
		left[i] = t.respLen
	}
	open := conns
	for open > 0 && time.Now().Before(end) {
		if _, err := r.SubmitAndWait(1, int64(100*time.Millisecond)); err != nil && err != unix.EINTR {
			return err
		}
		n := r.Ready()
		for k := uint32(0); k < n; k++ {
			c := r.CQEAt(k)
			op, i := int(c.UserData>>32), int(uint32(c.UserData))
			switch {
			case left[i] < 0: // closed
			case op == opConnect && c.Res == 0:
				if !link {
					arm(i)
				}
				send(i)
			case op == opRecv && c.Res > 0:
				id, _ := c.Buffer()
				br.Recycle(id)
				st.bytes += int64(c.Res)
				left[i] -= int(c.Res)
				wasMulti := multi[i]
				if !wasMulti && c.Res == bufSize {
					multi[i] = true // a large response: receive multishot from now on
				}
				switch {
				case left[i] == 0:
					st.ok++
					send(i) // linked (single-shot): it arms the next receive
					if multi[i] && !(wasMulti && c.More()) {
						arm(i)
					}
				case wasMulti && c.More():
				default:
					arm(i)
				}
			case op == opRecv && c.Res == -int32(unix.ENOBUFS):
				arm(i)
			default: // connect, send or recv failed, or the server closed
				st.errors++
				left[i], open = -1, open-1
			}
		}
		r.Advance(n)
		br.Publish()
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	return nil
}

func ud(op, i int) uint64 { return uint64(op)<<32 | uint64(uint32(i)) }

func nextPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
