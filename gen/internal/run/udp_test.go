package run

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestBufferNote(t *testing.T) {
	if n := bufferNote(8<<20, 8<<20, "quic-go"); n != "" {
		t.Errorf("enough buffer: note %q", n)
	}
	if n := bufferNote(-1, -1, "quic-go"); n != "" {
		t.Errorf("unknown sizes: note %q", n)
	}
	n := bufferNote(4<<20, 8<<20, "quic-go")
	if !strings.Contains(n, "receive buffer limited to 4096 KiB by net.core.rmem_max") || strings.Contains(n, "send buffer") ||
		!strings.Contains(n, "sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000") {
		t.Errorf("note %q", n)
	}
	n = bufferNote(8<<20, 2<<20, "quic-go")
	if !strings.HasPrefix(n, "UDP send buffer limited to 2048 KiB by net.core.wmem_max; quic-go wants 7 MiB") {
		t.Errorf("note %q", n)
	}
}

// TestGrowBuffer checks the probe against the kernel's limit: getsockopt
// reports twice what was granted, and without CAP_NET_ADMIN the grant is
// capped at net.core.rmem_max.
func TestGrowBuffer(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip("no /proc/sys/net/core/rmem_max")
	}
	rmemMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	got := GrowBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE)
	if got < min(2*rmemMax, quicWantBuf) {
		t.Errorf("receive buffer %d, want at least min(2 x rmem_max %d, %d)", got, rmemMax, quicWantBuf)
	}
	note := UDPBufferNote("quic-go")
	if (got >= quicWantBuf) != (note == "" || !strings.Contains(note, "receive")) {
		t.Errorf("receive buffer %d but note %q", got, note)
	}
}
