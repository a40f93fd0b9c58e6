package gen

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/quic-go/quic-go"
	"golang.org/x/sys/unix"

	"github.com/loadlab/loadlab/gen/internal/tlsfd"
	genquic "github.com/loadlab/loadlab/gen/quic"
)

// The lean HTTP/3 engine: HTTP/3 on package gen/quic's client ({TLS.Engine}
// lean, or auto where lean applies: see Config.leanTLS), on the same kind
// of loop as HTTP/1.1 and HTTP/2. Each loop is one locked thread pinned to
// its CPU, sleeping in epoll and making raw system calls (h3leanloop.go);
// no goroutine per connection, no hand-off. Each loop has one UDP socket
// (one per source address), connected to the target and shared by the
// loop's connection slots: the server tells the connections apart by
// connection ID, and the loop finds the slot of a datagram from the
// connection ID the server sends it to. The datagrams one pass of the loop
// produces leave in one sendmmsg; what arrives is read a batch per
// recvmmsg.
//
// quic-go's engine (h3engine.go) stays for {TLS.Engine} std and for what
// the lean client does not do (see leanTLS).

// h3LeanEngine is the state of one lean HTTP/3 run, shared by its loops
// (read only once the loops run, but for the atomics).
type h3LeanEngine struct {
	tcpEngine
	qc       *genquic.Config
	reqBytes uint64
	bufNote  string      // UDP buffer remark for generator.notes (set by the probe)
	done     atomic.Bool // a handshake completed: QUIC v1 was spoken
}

// leanDatagram is the largest datagram the loops send or take (the client
// advertises max_udp_payload_size 1472; a longer one is dropped).
const leanDatagram = 1500

// leanBatch is how many datagrams one sendmmsg or recvmmsg carries at most.
const leanBatch = 64

// newH3LeanEngine prepares the lean QUIC configuration from the run's lean
// TLS one and checks with one connection that something answers.
func newH3LeanEngine(r *run) (*h3LeanEngine, error) {
	base, err := newLoopEngine(r)
	if err != nil {
		return nil, err
	}
	e := &h3LeanEngine{tcpEngine: base}
	e.io = IOEpoll
	e.ioNote = "HTTP/3: the lean QUIC client (gen/quic) on epoll loops, one UDP socket per loop, sendmmsg and recvmmsg ({IO} chooses for the HTTP/1.1 and HTTP/2 loops)"
	e.notePwait2()
	cfg := r.cfg
	rq := &cfg.reqs[0]
	e.qc = &genquic.Config{TLS: r.tls.Lean, Authority: rq.target.HostHeader, Path: rq.target.Path,
		Method: rq.method, HandshakeTimeout: cfg.Timeout, Timeout: cfg.Timeout, KeepAlive: !cfg.NewConn}
	// As quic-go's engine sends them: a Host header is the :authority,
	// the connection-specific fields HTTP/3 forbids are left out, and a
	// user-agent is added unless one is given.
	for _, h := range rq.headers {
		switch strings.ToLower(h.Name) {
		case "host":
			e.qc.Authority = h.Value
		case "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		default:
			e.qc.Header = append(e.qc.Header, [2]string{h.Name, h.Value})
		}
	}
	if !hasHeader(rq.headers, "user-agent") {
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

func (e *h3LeanEngine) protocol() string { return "h3" }

func (e *h3LeanEngine) newDriver(lc *lifecycle, conns int) (driver, error) {
	return newH3LeanLoop(e, lc, conns)
}

// closes: UDP sockets leave no TIME_WAIT.
func (e *h3LeanEngine) closes() int64 { return 0 }

// outcome: the loops' thread accounts (tcpEngine's), the QUIC version and
// the UDP notes.
func (e *h3LeanEngine) outcome(o *outcome) {
	e.tcpEngine.outcome(o)
	o.quicLoops = true
	o.g.IO = "udp"
	if e.done.Load() {
		o.quicVersion = "v1" // the lean client speaks QUIC v1 only
	}
	if e.bufNote != "" {
		o.g.Notes = append(o.g.Notes, e.bufNote)
	}
	var dropped int64
	for _, lc := range e.r.loops {
		dropped += lc.d.(*h3LeanLoop).dropped()
	}
	if dropped > 0 {
		o.g.Notes = append(o.g.Notes, fmt.Sprintf("h3: the kernel refused %d datagrams on the generator's UDP sockets (a full send buffer): QUIC resent what mattered, at the cost of the requests' latency", dropped))
	}
}

// openUDP opens a non-blocking UDP socket connected to the target, bound
// to src if it is valid, with buffers as large as the kernel allows up to
// what quic-go asks for. Call it inside the run's network namespace.
func (e *h3LeanEngine) openUDP(src netip.Addr) (int, error) {
	fd, err := unix.Socket(e.family, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open UDP socket: %w", err)
	}
	growBuffer(fd, unix.SO_RCVBUF, unix.SO_RCVBUFFORCE) // what it got: the probe's bufNote
	growBuffer(fd, unix.SO_SNDBUF, unix.SO_SNDBUFFORCE)
	if src.IsValid() {
		if err := unix.Bind(fd, sockaddr(netip.AddrPortFrom(src, 0))); err != nil {
			unix.Close(fd)
			return -1, fieldErr("SrcAddrs", "%s is not an address of this host (bind: %v): add it to an interface or list local addresses", src, err)
		}
	}
	if err := unix.Connect(fd, sockaddr(e.r.dst)); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("connect UDP socket to %s: %w", e.r.dst, err)
	}
	return fd, nil
}

// probe checks with one QUIC handshake that something answers (probeQUIC:
// quic-go's, which sends no request), from the run's first source address
// if any, as its requests come; and that the source addresses exist.
func (e *h3LeanEngine) probe() error {
	r := e.r
	return r.inNetns(func() error {
		if err := e.checkSrcAddrs(); err != nil {
			return err
		}
		e.bufNote = udpBufferNote("the lean QUIC client")
		var src net.IP
		if len(r.cfg.srcAddrs) > 0 {
			src = r.cfg.srcAddrs[0].AsSlice()
		}
		udp, err := listenUDP(net.UDPAddrFromAddrPort(r.dst), src)
		if err != nil {
			return err
		}
		defer udp.Close()
		conf := r.tls.Std.Clone()
		conf.NextProtos = []string{"h3"}
		return probeQUIC(r, udp, conf, &quic.Config{Versions: []quic.Version{quic.Version1}})
	})
}

// classifyLean maps gen/quic's error classes to the run's, as classifyH3
// maps quic-go's errors for the same failures.
func classifyLean(err error) ErrorClass {
	switch genquic.ClassOf(err) {
	case genquic.ClassTLS:
		return ErrTLS
	case genquic.ClassProtocol:
		return ErrParse
	case genquic.ClassVersion:
		return ErrOther
	case genquic.ClassPeerClosed, genquic.ClassConnIDRetired:
		return ErrClosed // the server closed the connection, or retired the ID it knew it by
	case genquic.ClassHandshakeTimeout, genquic.ClassTimeout:
		return ErrTimeout
	case genquic.ClassStreamReset:
		return ErrReset // as quic-go's engine counts a reset request stream
	}
	return classify(err)
}

// leanCapture tells the run's TLS account what the first completed lean
// handshake negotiated.
func (e *h3LeanEngine) leanCapture(c *genquic.Conn) {
	e.r.tls.Capture(tlsfd.LeanSession(c.Handshake()))
}
