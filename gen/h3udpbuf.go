package gen

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// quicWantBuf is the UDP socket buffer size quic-go asks for (7 MiB on
// Linux). It checks the result through getsockopt, which reports the
// kernel's doubled value: with net.core.rmem_max at 4 MiB it reads 8 MiB
// and is content.
const quicWantBuf = 7 << 20

// udpBufferNote repeats quic-go's buffer check on a socket of our own
// (SO_RCVBUF, then SO_RCVBUFFORCE, and the same for sending) and returns a
// remark for generator.notes when who's sockets (quic-go's, or the lean
// client's, which ask the same way) will not get what they want, or "" when
// they will (or the probe fails). It never changes sysctls.
func udpBufferNote(who string) string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	rcv := growBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE)
	snd := growBuffer(fd, unix.SO_SNDBUF, unix.SO_SNDBUFFORCE)
	return bufferNote(rcv, snd, who)
}

// growBuffer asks for quicWantBuf the way quic-go does and returns what
// getsockopt reports afterwards (-1 if it cannot tell).
func growBuffer(fd, opt, force int) int {
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, quicWantBuf)
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt)
	if err == nil && got < quicWantBuf {
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, quicWantBuf) // needs CAP_NET_ADMIN
		got, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, opt)
	}
	if err != nil {
		return -1
	}
	return got
}

// bufferNote words the remark for buffer sizes rcv and snd (bytes as
// getsockopt reports them; -1 = unknown, no remark) of who's sockets.
func bufferNote(rcv, snd int, who string) string {
	var short []string
	if rcv >= 0 && rcv < quicWantBuf {
		short = append(short, fmt.Sprintf("UDP receive buffer limited to %d KiB by net.core.rmem_max", rcv/1024))
	}
	if snd >= 0 && snd < quicWantBuf {
		short = append(short, fmt.Sprintf("UDP send buffer limited to %d KiB by net.core.wmem_max", snd/1024))
	}
	if len(short) == 0 {
		return ""
	}
	return strings.Join(short, ", ") + "; " + who + " wants 7 MiB: sysctl -w net.core.rmem_max=7500000 net.core.wmem_max=7500000"
}
