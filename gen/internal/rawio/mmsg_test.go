package rawio

import (
	"bytes"
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// udpPair returns two non-blocking UDP sockets on loopback connected to
// each other.
func udpPair(t *testing.T) (a, b int) {
	t.Helper()
	open := func() int {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return fd
	}
	a, b = open(), open()
	sa, _ := unix.Getsockname(a)
	sb, _ := unix.Getsockname(b)
	if err := unix.Connect(a, sb); err != nil {
		t.Fatal(err)
	}
	if err := unix.Connect(b, sa); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestSenderReceiver: datagrams queued in the Sender arrive whole, each
// on its own and in order, through batch-full flushes, a datagram that
// outgrew Buf's room (sent on its own, after what was queued) and an
// empty one (nothing sent); the Receiver reads them in batches and drops
// one longer than its buffers.
func TestSenderReceiver(t *testing.T) {
	a, b := udpPair(t)
	tx := NewSender(a, 4, 16) // room for 4 datagrams, 64 bytes in all
	rx := NewReceiver(b, 3, 64)
	var want [][]byte
	for i := 0; i < 10; i++ {
		d := []byte(fmt.Sprintf("datagram %d", i))
		if i == 6 {
			d = bytes.Repeat([]byte{'x'}, 100) // beyond the room left: reallocated, sent on its own
		}
		tx.Add(append(tx.Buf(16), d...))
		want = append(want, d)
	}
	tx.Add(tx.Buf(16)) // empty: nothing queued
	if tx.Queued() != 3 {
		t.Fatalf("queued %d, want 3 (a full batch of 4 sent, then 2 with the long one after them, then 3 left)", tx.Queued())
	}
	tx.Flush()
	if tx.Dropped != 0 {
		t.Fatalf("dropped %d", tx.Dropped)
	}
	var got [][]byte
	for {
		n, err := rx.Read()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if d := rx.Datagram(i); d != nil {
				got = append(got, append([]byte(nil), d...))
			}
		}
		if n == 0 {
			break
		}
	}
	// The 100-byte datagram is longer than the Receiver's 64: dropped.
	// The queued ones went out first (flushed before it), then it.
	var short [][]byte
	for _, d := range want {
		if len(d) <= 64 {
			short = append(short, d)
		}
	}
	if len(got) != len(short) {
		t.Fatalf("got %d datagrams %q, want %d", len(got), got, len(short))
	}
	for i := range got {
		if !bytes.Equal(got[i], short[i]) {
			t.Errorf("datagram %d: %q, want %q", i, got[i], short[i])
		}
	}
}

// TestSenderAllocs: queueing and flushing allocate nothing.
func TestSenderAllocs(t *testing.T) {
	a, b := udpPair(t)
	tx := NewSender(a, 8, 64)
	rx := NewReceiver(b, 8, 64)
	msg := []byte("hello")
	n := testing.AllocsPerRun(100, func() {
		for i := 0; i < 5; i++ {
			tx.Add(append(tx.Buf(64), msg...))
		}
		tx.Flush()
		for {
			if k, _ := rx.Read(); k == 0 {
				break
			}
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per batch, want 0", n)
	}
}
