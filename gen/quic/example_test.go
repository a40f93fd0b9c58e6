package quic_test

import (
	"crypto/sha256"
	"fmt"
	"net"
	"time"

	"github.com/loadlab/loadlab/gen/quic"
	"github.com/loadlab/loadlab/gen/tls13"
)

// One connection driven by a blocking loop over a connected UDP socket.
// An event loop would instead read from one socket for many Conns,
// route each datagram with quic.DestConnID, and wake on the earliest
// Deadline.
func Example() {
	cfg := &quic.Config{TLS: &tls13.Config{ServerName: "localhost"}, Path: "/"}
	if err := cfg.Prepare(); err != nil {
		panic(err)
	}
	cl, err := quic.NewClient(cfg) // one per event loop
	if err != nil {
		panic(err)
	}
	sock, err := net.Dial("udp", "127.0.0.1:4433")
	if err != nil {
		panic(err)
	}
	defer sock.Close()
	var c quic.Conn // reused for the next connection
	sum := sha256.New()
	c.Body = sum
	buf, out := make([]byte, 65536), make([]byte, 0, quic.MinDatagram)
	out, _ = c.Start(cl, time.Now(), out[:0])
	for !c.Closed() {
		if len(out) > 0 {
			sock.Write(out)
		}
		sock.SetReadDeadline(c.Deadline())
		n, err := sock.Read(buf)
		if err != nil {
			out, _ = c.Timeout(time.Now(), out[:0])
			continue
		}
		out, _ = c.Receive(time.Now(), buf[:n], out[:0])
	}
	if len(out) > 0 {
		sock.Write(out) // CONNECTION_CLOSE
	}
	at, _ := c.HandshakeDone()
	fmt.Println(c.Status(), c.BodyBytes(), c.ErrClass(), at)
}
