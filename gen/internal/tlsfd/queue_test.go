package tlsfd

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"testing"

	"github.com/loadlab/loadlab/gen/internal/sock"
	"golang.org/x/sys/unix"
)

// unreadConn is a client Conn on its record layer (TLS 1.3) whose server
// end never reads: a unix stream socketpair (not loopback TCP, whose
// windows a peer that never reads can stall both ways until a
// retransmission timer fires), the client's send buffer at the kernel's
// least, so that it is full after a few KiB; server is the server's
// record layer, nc its end.
func unreadConn(t *testing.T) (c *Conn, server *recordLayer, fd int, nc net.Conn) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fd = fds[0]
	unix.SetNonblock(fd, true)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 1); err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fds[1]), "server")
	nc, err = net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd); nc.Close() })
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
	const updates = 50_000 // 27-byte answers: 1.3 MB, far past the bound
	go func() {
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
		// Its last word, application data: a client that reads it took
		// every update without giving up.
		nc.Write(server.seal(nil, typeApplicationData, []byte("end")))
	}()
	buf := make([]byte, readBufSize)
	var err error
	var n int
	for {
		n, err = c.recv(buf)
		if err == sock.ErrWouldBlock {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			unix.Poll(p, 5000) // the server writes on until its end
			continue
		}
		if err != nil || n > 0 {
			break
		}
	}
	if !errors.Is(err, errRepliesUnread) {
		t.Fatalf("read after a flood of %d KeyUpdates: %q, %v, with %d bytes of answers queued; want %v", updates, buf[:n], err, len(c.out), errRepliesUnread)
	}
	if max := sock.MaxQueued + readBufSize; len(c.out) > max {
		t.Errorf("%d bytes queued, want at most %d", len(c.out), max)
	}
	nc.Close()
}
