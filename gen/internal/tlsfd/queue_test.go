package tlsfd

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"

	"github.com/loadlab/loadlab/gen/internal/sock"
	"golang.org/x/sys/unix"
)

// unreadConn is a client Conn on its record layer (TLS 1.3) over a
// socketpair whose server end never reads, the client's send buffer and
// the server's receive buffer at the kernel's least, so that they are full
// after a few KiB; server is the server's record layer.
func unreadConn(t *testing.T) (c *Conn, server *recordLayer, fd int, nc net.Conn) {
	t.Helper()
	fd, nc = rlSocketpair(t)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 1); err != nil {
		t.Fatal(err)
	}
	if err := nc.(*net.TCPConn).SetReadBuffer(1); err != nil {
		t.Fatal(err)
	}
	client, server := layerPair(t, tls.VersionTLS13, tls.TLS_AES_128_GCM_SHA256)
	c = &Conn{fd: fd, tl: &Loop{}}
	c.useRecords(client)
	return c, server, fd, nc
}

// A server that never reads: Write takes nothing (EAGAIN) once
// sock.MaxQueued bytes wait unsent, instead of queueing without end.
func TestTLSWriteQueueBounded(t *testing.T) {
	c, _, _, _ := unreadConn(t)
	chunk := make([]byte, 4096)
	var taken int
	for range 64 << 20 / len(chunk) {
		n, err := c.Write(chunk)
		if sock.NotReady(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		taken += n
	}
	if max := sock.MaxQueued + len(chunk) + 64; len(c.out) > max {
		t.Fatalf("a server that never reads: %d bytes queued after %d taken, want at most %d (sock.MaxQueued and one write)", len(c.out), taken, max)
	}
	if taken == 64<<20 {
		t.Fatal("Write never said EAGAIN")
	}
}

// A server that asks for KeyUpdates and never reads the answers: the read
// fails once sock.MaxQueued bytes of answers wait, instead of queueing them
// without end.
func TestTLSKeyUpdateFloodEnds(t *testing.T) {
	c, server, fd, nc := unreadConn(t)
	const updates = 50_000      // 27-byte answers: 1.3 MB, far past the bound
	done := make(chan struct{}) // closed when the server has sent its last update
	go func() {
		defer close(done)
		for range updates {
			if err := server.sendKeyUpdate(true); err != nil {
				return
			}
			if _, err := nc.Write(server.reply); err != nil {
				return // the client gave up
			}
			server.reply = server.reply[:0]
			// The server keeps its read keys: it never reads.
		}
	}()
	buf := make([]byte, readBufSize)
	var err error
read:
	for {
		_, err = c.recv(buf)
		if err == sock.ErrWouldBlock {
			select {
			case <-done:
				p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				if n, _ := unix.Poll(p, 0); n == 0 {
					break read // the server is done and every update was read
				}
			default:
				p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
				unix.Poll(p, 100) // the server is still sending: wait for bytes or its end
			}
			continue
		}
		if err != nil || len(c.out) > 2*sock.MaxQueued {
			break
		}
	}
	if !errors.Is(err, errRepliesUnread) {
		t.Fatalf("read after a flood of %d KeyUpdates: %v with %d bytes of answers queued, want %v", updates, err, len(c.out), errRepliesUnread)
	}
	if max := sock.MaxQueued + readBufSize; len(c.out) > max {
		t.Errorf("%d bytes queued, want at most %d", len(c.out), max)
	}
	nc.Close()
}
