package run

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"
)

// What both HTTP/3 engines (quic-go's and the lean QUIC client's) need of
// UDP: sockets, their buffers, and a QUIC handshake that checks the
// target answers.

// ListenUDP opens a UDP socket for dst, bound to src if set. Call it
// inside the run's network namespace.
func ListenUDP(dst *net.UDPAddr, src net.IP) (*net.UDPConn, error) {
	network := "udp4"
	if dst.IP.To4() == nil {
		network = "udp6"
	}
	c, err := net.ListenUDP(network, &net.UDPAddr{IP: src})
	if err != nil {
		return nil, fmt.Errorf("open UDP socket: %w", err)
	}
	return c, nil
}

// ProbeQUIC makes one QUIC handshake with quic-go over udp, then closes
// the connection: no request is sent, whichever engine runs (the lean
// client would send its first request with its Finished). UDP has no
// connection refusal to wait for (unless an ICMP error comes back): a
// closed port looks like a silent one, so the probe waits up to 3 s (or
// the timeout). A handshake that fails otherwise (certificate, TLS alert)
// does not stop the run: its requests count those failures as errors.
// qconf nil speaks QUIC v1. Call it inside the run's network namespace.
func (r *Run) ProbeQUIC(udp *net.UDPConn, tlsConf *tls.Config, qconf *quic.Config) error {
	wait := min(r.Spec.Timeout, 3*time.Second)
	if qconf == nil {
		qconf = &quic.Config{Versions: []quic.Version{quic.Version1}}
	}
	if err := CheckLocalTarget(r.Spec, r.Dst.Addr()); err != nil {
		return err
	}
	tr := &quic.Transport{Conn: udp}
	defer tr.Close()
	conf := tlsConf.Clone()
	conf.ClientSessionCache = nil // no session to resume from, none to leave behind
	qconf = qconf.Clone()
	qconf.HandshakeIdleTimeout = wait
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	dst := net.UDPAddrFromAddrPort(r.Dst)
	qc, err := tr.Dial(ctx, dst, conf, qconf)
	if err == nil {
		qc.CloseWithError(0, "")
		return nil
	}
	var idle *quic.IdleTimeoutError
	if errors.Is(err, context.DeadlineExceeded) || IsTimeout(err) || errors.As(err, &idle) {
		return fmt.Errorf("no QUIC answer from %s within %v: start an HTTP/3 server on UDP port %d or check the URL", r.Dst, wait, r.Dst.Port())
	}
	var errno unix.Errno
	if errors.As(err, &errno) && errno == unix.ECONNREFUSED {
		return Explain(errno, "nothing is listening on UDP %s (connection refused): start an HTTP/3 server or check the URL", r.Dst)
	}
	return nil
}

// quicWantBuf is the UDP socket buffer size quic-go asks for (7 MiB on
// Linux). It checks the result through getsockopt, which seconds the
// kernel's doubled value: with net.core.rmem_max at 4 MiB it reads 8 MiB
// and is content.
const quicWantBuf = 7 << 20

// UDPBufferNote repeats quic-go's buffer check on a socket of our own
// (SO_RCVBUF, then SO_RCVBUFFORCE, and the same for sending) and returns a
// remark for generator.notes when who's sockets (quic-go's, or the lean
// client's, which ask the same way) will not get what they want, or "" when
// they will (or the probe fails). It never changes sysctls.
func UDPBufferNote(who string) string {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	rcv := GrowBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE)
	snd := GrowBuffer(fd, unix.SO_SNDBUF, unix.SO_SNDBUFFORCE)
	return bufferNote(rcv, snd, who)
}

// GrowBuffer asks for quicWantBuf the way quic-go does and returns what
// getsockopt seconds afterwards (-1 if it cannot tell).
func GrowBuffer(fd, opt, force int) int {
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
// getsockopt seconds them; -1 = unknown, no remark) of who's sockets.
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
