package gen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"
)

func TestClassifyH3(t *testing.T) {
	cases := []struct {
		err  error
		want ErrorClass
		keep bool // the error itself is the sample (else a fixed message)
	}{
		{&quic.TransportError{ErrorCode: 0x12a, ErrorMessage: "tls: failed to verify certificate: x509: certificate signed by unknown authority"}, ErrTLS, true},
		{fmt.Errorf("wrapped: %w", &quic.TransportError{ErrorCode: 0x128, Remote: true}), ErrTLS, true},
		{errors.New("tls: handshake failure"), ErrTLS, true},
		{errNoHandshake, ErrTimeout, true},
		{&quic.IdleTimeoutError{}, ErrTimeout, true},
		{context.DeadlineExceeded, ErrTimeout, false},
		{os.ErrDeadlineExceeded, ErrTimeout, false},
		{&quic.StatelessResetError{}, ErrReset, true},
		{&quic.StreamError{StreamID: 4, ErrorCode: 0x10c, Remote: true}, ErrReset, true},
		{&quic.ApplicationError{ErrorCode: 0x100, Remote: true}, ErrClosed, true},
		{&quic.TransportError{ErrorCode: quic.ProtocolViolation, Remote: true}, ErrClosed, true},
		{io.ErrUnexpectedEOF, ErrClosed, true},
		{errors.New("http3: invalid response: bad status"), ErrParse, true},
		{errors.New("http3: parsing frame failed: frame too large"), ErrParse, true},
		{errBodyMismatch, ErrBodyMismatch, true},
		{fmt.Errorf("write: %w", syscall.ECONNREFUSED), ErrConnectRefused, true},
		{&quic.StreamError{StreamID: 4, ErrorCode: 0x10c}, ErrOther, true}, // our own cancel
		{errors.New("something new"), ErrOther, true},
	}
	for _, tc := range cases {
		got, sample := classifyH3(tc.err)
		if got != tc.want {
			t.Errorf("%T %v: class %v, want %v", tc.err, tc.err, got, tc.want)
		}
		if tc.keep && sample != tc.err {
			t.Errorf("%v: sample %v, want the error itself", tc.err, sample)
		}
		if !tc.keep && sample != errTimeout {
			t.Errorf("%v: sample %v, want %v", tc.err, sample, errTimeout)
		}
	}
}

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
	got := growBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE)
	if got < min(2*rmemMax, quicWantBuf) {
		t.Errorf("receive buffer %d, want at least min(2 x rmem_max %d, %d)", got, rmemMax, quicWantBuf)
	}
	note := udpBufferNote("quic-go")
	if (got >= quicWantBuf) != (note == "" || !strings.Contains(note, "receive")) {
		t.Errorf("receive buffer %d but note %q", got, note)
	}
}
