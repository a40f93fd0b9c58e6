package sockdiag

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Three connections the client closes first leave three client sockets in
// TIME_WAIT, all to the server's port: CountPort and CountTo both see
// exactly them (the port is this test's own, so nothing else counts).
func TestCountLoopback(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = c.Write([]byte("hi"))
				// Close only after the client did, so the client's side
				// is the one left in TIME_WAIT.
				_, _ = c.Read(make([]byte, 1))
				c.Close()
			}()
		}
	}()
	dst := netip.MustParseAddrPort(ln.Addr().String())
	fd, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if n := CountTo(fd, dst); n != 0 {
		t.Fatalf("CountTo before any connection = %d, want 0", n)
	}
	const conns = 3
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		_, _ = c.Read(make([]byte, 2))
		c.Close()
	}
	var byPort, byDst int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if byPort, err = CountPort(dst.Port()); err != nil {
			t.Fatal(err)
		}
		byDst = CountTo(fd, dst)
		if byPort == conns && byDst == conns {
			break
		}
	}
	if byPort != conns || byDst != conns {
		t.Errorf("CountPort(%d) = %d, CountTo(%s) = %d; want %d each", dst.Port(), byPort, dst, byDst, conns)
	}
	if n := CountTo(-1, dst); n != -1 {
		t.Errorf("CountTo without a socket = %d, want -1", n)
	}
}
