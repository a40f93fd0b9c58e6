package h3lean

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/rawio"
	"github.com/loadlab/loadlab/gen/internal/run"
	"github.com/loadlab/loadlab/gen/internal/tcploop"
	"github.com/loadlab/loadlab/gen/quic"
	"github.com/loadlab/loadlab/internal/fields"
)

// The lean HTTP/3 engine: HTTP/3 on package gen/quic's client ({TLS.Engine}
// lean, or auto where lean applies: see gen's leanTLS), on the same kind
// of loop as HTTP/1.1 and HTTP/2 (gen/internal/tcploop). Each loop is one
// locked thread pinned to its CPU, sleeping in epoll and making raw system
// calls (loop.go);
// no goroutine per connection, no hand-off. Each loop has one UDP socket
// (one per source address), connected to the target and shared by the
// loop's connection slots: the server tells the connections apart by
// connection ID, and the loop finds the slot of a datagram from the
// connection ID the server sends it to. The datagrams one pass of the loop
// produces leave in one sendmmsg; what arrives is read a batch per
// recvmmsg.
//
// quic-go's engine (gen/internal/engine/h3std) stays for {TLS.Engine} std
// and for what the lean client does not do.

// engine is the state of one lean HTTP/3 run, shared by its loops
// (read only once the loops run, but for the atomics).
type engine struct {
	tcploop.Engine
	qc       *quic.Config
	reqBytes uint64
	bufNote  string       // UDP buffer remark for generator.notes (set by the probe)
	done     atomic.Bool  // a handshake completed: QUIC v1 was spoken
	socks    []*[]udpSock // every loop's sockets (NewDriver adds them), for the datagrams the kernel refused
}

// maxDatagram is the largest datagram the loops send or take (the client
// advertises max_udp_payload_size 1472; a longer one is dropped).
const maxDatagram = 1500

// batch is how many datagrams one sendmmsg or recvmmsg carries at most.
const batch = 64

// New prepares the lean QUIC configuration from the run's lean TLS one and
// checks with one connection that something answers.
func New(r *run.Run) (run.Engine, error) {
	base, err := tcploop.NewBase(r)
	if err != nil {
		return nil, err
	}
	e := &engine{Engine: base}
	e.IO = run.IOEpoll
	e.IONote = "HTTP/3: the lean QUIC client (gen/quic) on epoll loops, one UDP socket per loop, sendmmsg and recvmmsg ({IO} chooses for the HTTP/1.1 and HTTP/2 loops)"
	e.NotePwait2()
	cfg := r.Spec
	rq := &cfg.Reqs[0]
	e.qc = &quic.Config{TLS: r.TLS.Lean, Authority: rq.Target.HostHeader, Path: rq.Target.Path,
		Method: rq.Method, HandshakeTimeout: cfg.Timeout, Timeout: cfg.Timeout, KeepAlive: !cfg.NewConn}
	// As quic-go's engine sends them: a Host header is the :authority,
	// the connection-specific fields HTTP/3 forbids are left out, and a
	// user-agent is added unless one is given.
	for _, h := range rq.Headers {
		switch strings.ToLower(h.Name) {
		case "host":
			e.qc.Authority = h.Value
		case "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		default:
			e.qc.Header = append(e.qc.Header, [2]string{h.Name, h.Value})
		}
	}
	if !run.HasHeader(rq.Headers, "user-agent") {
		e.qc.Header = append(e.qc.Header, [2]string{"user-agent", "loadlab"})
	}
	if err := e.qc.Prepare(); err != nil {
		return nil, fmt.Errorf("lean QUIC client: %w", err)
	}
	e.reqBytes = uint64(e.qc.RequestBytes())
	if err := e.probe(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *engine) Protocol() string { return "h3" }

// Closes: UDP sockets leave no TIME_WAIT.
func (e *engine) Closes() int64 { return 0 }

// Stats: the loops' thread accounts (tcploop.Engine's), the QUIC version
// and the UDP notes.
func (e *engine) Stats(st *run.Stats) {
	e.Engine.Stats(st)
	st.QUICLoops = true
	st.Gen.IO = "udp"
	if e.done.Load() {
		st.QUICVersion = "v1" // the lean client speaks QUIC v1 only
	}
	if e.bufNote != "" {
		st.Gen.Notes = append(st.Gen.Notes, e.bufNote)
	}
	var dropped int64
	for _, socks := range e.socks {
		for _, s := range *socks {
			dropped += s.tx.Dropped
		}
	}
	if dropped > 0 {
		st.Gen.Notes = append(st.Gen.Notes, fmt.Sprintf("h3: the kernel refused %d datagrams on the generator's UDP sockets (a full send buffer): QUIC resent what mattered, at the cost of the requests' latency", dropped))
	}
}

// udpSock is one of a loop's UDP sockets, connected to the target.
type udpSock struct {
	fd int
	tx *rawio.Sender
	rx *rawio.Receiver
}

// openUDP opens a non-blocking UDP socket connected to the target, bound
// to src if it is valid, with buffers as large as the kernel allows up to
// what quic-go asks for. Call it inside the run's network namespace.
func (e *engine) openUDP(src netip.Addr) (int, error) {
	fd, err := unix.Socket(e.Family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open UDP socket: %w", err)
	}
	run.GrowBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE) // what it got: the probe's bufNote
	run.GrowBuffer(fd, unix.SO_SNDBUF, unix.SO_SNDBUFFORCE)
	if src.IsValid() {
		if err := unix.Bind(fd, tcploop.Sockaddr(netip.AddrPortFrom(src, 0))); err != nil {
			unix.Close(fd)
			return -1, fields.FieldErrorf("SrcAddrs", "%s is not an address of this host (bind: %v): add it to an interface or list local addresses", src, err)
		}
	}
	if err := unix.Connect(fd, tcploop.Sockaddr(e.R.Dst)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect UDP socket to %s: %w", e.R.Dst, err)
	}
	return fd, nil
}

// probe checks with one QUIC handshake that something answers
// (Run.ProbeQUIC: quic-go's, which sends no request), from the run's first
// source address if any, as its requests come; and that the source
// addresses exist.
func (e *engine) probe() error {
	r := e.R
	return r.InNetns(func() error {
		if err := e.CheckSrcAddrs(); err != nil {
			return err
		}
		e.bufNote = run.UDPBufferNote("the lean QUIC client")
		var src net.IP
		if len(r.Spec.SrcAddrs) > 0 {
			src = r.Spec.SrcAddrs[0].AsSlice()
		}
		udp, err := run.ListenUDP(net.UDPAddrFromAddrPort(r.Dst), src)
		if err != nil {
			return err
		}
		defer udp.Close()
		conf := r.TLS.Std.Clone()
		conf.NextProtos = []string{"h3"}
		return r.ProbeQUIC(udp, conf, nil)
	})
}

// classify maps gen/quic's error classes to the run's, as quic-go's engine
// maps quic-go's errors for the same failures.
func classify(err error) run.ErrorClass {
	switch quic.ClassOf(err) {
	case quic.ClassTLS:
		return run.ClassTLS
	case quic.ClassProtocol:
		return run.ClassParse
	case quic.ClassVersion:
		return run.ClassOther
	case quic.ClassPeerClosed, quic.ClassConnIDRetired:
		return run.ClassClosed // the server closed the connection, or retired the ID it knew it by
	case quic.ClassHandshakeTimeout, quic.ClassTimeout:
		return run.ClassTimeout
	case quic.ClassStreamReset:
		return run.ClassReset // as quic-go's engine counts a reset request stream
	}
	return run.Classify(err)
}
