package backend

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/valyala/fasthttp"
)

// closeGrace bounds how long Close waits for busy connections before it
// cuts them.
const closeGrace = 5 * time.Second

// Stats are the server's counters since Start.
type Stats struct {
	Accepted uint64 `json:"accepted"` // TCP connections accepted (plain or TLS)
	Open     uint64 `json:"open"`     // TCP connections open now
	Requests uint64 `json:"requests"` // requests served, all protocols, /_stats excluded
	// Apps are the requests each named backend served (Config.Apps; nil
	// without): Apps[i] is AppName(i+1)'s. They add up to Requests.
	Apps []uint64 `json:"apps,omitempty"`
}

// Server is a running backend; create it with Start and stop it with Close.
type Server struct {
	cfg   Config
	start time.Time
	stall staller

	ln        *countingListener   // the first listener: Listen, or Apps[0]
	lns       []*countingListener // every listener (Apps: one per named backend)
	fast      *fasthttp.Server
	serveDone chan struct{}

	h2   *h2Server   // with H2
	disp *dispatcher // with H2: hands connections to HTTP/2 or fasthttp

	h3     *http3.Server
	qln    *quic.EarlyListener
	udp    net.PacketConn
	h3Done chan struct{}

	requests atomic.Uint64
	apps     []appCounter // per named backend (Config.Apps)

	closeGrace time.Duration // how long Close waits before cutting busy connections
	closeOnce  sync.Once
	closeErr   error
}

// Start validates cfg, listens on cfg.Listen (TCP, and UDP for HTTP/3) and
// serves in the background. It returns once the listeners accept.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	cfg = cfg.withDefaults()

	var tlsCfg *tls.Config
	if cfg.TLS() {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("backend: load TLS certificate %s and key %s: %v; pass a matching PEM pair", cfg.TLSCert, cfg.TLSKey, err)
		}
		tlsCfg = &tls.Config{
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
			MaxVersion:   tls.VersionTLS13,
		}
	}

	addrs := []string{cfg.Listen}
	if len(cfg.Apps) > 0 {
		addrs = cfg.Apps
	}
	s := &Server{cfg: cfg, serveDone: make(chan struct{}), closeGrace: closeGrace}
	for i, a := range addrs {
		tcp, err := net.Listen("tcp", a)
		if err != nil {
			s.closeListeners()
			return nil, fmt.Errorf("backend: listen on %s: %v; pick a free address", a, opCause(err))
		}
		l := newCountingListener(tcp)
		if len(cfg.Apps) > 0 {
			l.app = i + 1
			s.apps = append(s.apps, appCounter{name: []byte(AppName(i + 1))})
		}
		s.lns = append(s.lns, l)
	}
	s.ln = s.lns[0]

	if cfg.H3 {
		if err := s.listenH3(tlsCfg); err != nil {
			s.closeListeners()
			return nil, err
		}
	}

	s.start = time.Now()
	s.stall = staller{start: s.start, every: cfg.StallEvery, dur: cfg.StallFor}
	s.fast = s.newFastServer(cfg.Concurrency)

	var serveLn net.Listener = s.ln
	if tlsCfg != nil {
		h1 := tlsCfg.Clone()
		h1.NextProtos = []string{"http/1.1"}
		if cfg.H2 {
			h1.NextProtos = []string{"h2", "http/1.1"}
		}
		serveLn = tls.NewListener(s.ln, h1)
	}
	if cfg.H2 {
		s.h2 = newH2Server(s, cfg.H2MaxStreams)
		s.disp = newDispatcher(serveLn, tlsCfg != nil, s.h2)
		serveLn = s.disp
	}
	var serving sync.WaitGroup
	for _, l := range s.lns[1:] {
		serving.Add(1)
		go func() {
			defer serving.Done()
			_ = s.fast.Serve(l) // the named backends after the first (plain HTTP/1.1)
		}()
	}
	go func() {
		defer close(s.serveDone)
		_ = s.fast.Serve(serveLn) // returns when Close closes the listener
		serving.Wait()
	}()
	if s.h3 != nil {
		go func() {
			defer close(s.h3Done)
			_ = s.h3.ServeListener(s.qln) // returns http.ErrServerClosed on Close
		}()
	}
	return s, nil
}

// listenH3 opens the UDP socket on the TCP listener's port and the QUIC
// listener on it; serving starts in Start.
func (s *Server) listenH3(tlsCfg *tls.Config) error {
	addr := s.ln.Addr().(*net.TCPAddr)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: addr.IP, Port: addr.Port, Zone: addr.Zone})
	if err != nil {
		return fmt.Errorf("backend: listen for HTTP/3 on udp %s: %v; free that UDP port or pick another address", addr, opCause(err))
	}
	qln, err := quic.ListenEarly(udp, http3.ConfigureTLSConfig(tlsCfg), &quic.Config{
		MaxIncomingStreams: 1000, // concurrent requests per connection
	})
	if err != nil {
		_ = udp.Close()
		return fmt.Errorf("backend: start QUIC on udp %s: %v", addr, err)
	}
	s.udp, s.qln, s.h3Done = udp, qln, make(chan struct{})
	s.h3 = &http3.Server{Handler: h3Handler{s}}
	return nil
}

// Addr returns the TCP address the server listens on (the real port when
// Listen asked for port 0). With H3 the same host:port is served over UDP.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns "http://ADDR" or "https://ADDR" (with H2, HTTP/2 is served
// at the same URL: h2c with prior knowledge, or ALPN h2).
func (s *Server) URL() string {
	if s.cfg.TLS() {
		return "https://" + s.Addr()
	}
	return "http://" + s.Addr()
}

// StartedAt returns the instant the stall schedule counts from.
func (s *Server) StartedAt() time.Time { return s.start }

// Addrs returns the TCP address of every listener: Addr alone, or one
// per named backend (Config.Apps), in order.
func (s *Server) Addrs() []string {
	out := make([]string, len(s.lns))
	for i, l := range s.lns {
		out[i] = l.Addr().String()
	}
	return out
}

// Stats returns the current counters.
func (s *Server) Stats() Stats {
	var st Stats
	for _, l := range s.lns {
		st.Open += l.open()
		st.Accepted += l.accepted.Load()
	}
	st.Requests = s.requests.Load()
	if len(s.apps) > 0 {
		st.Apps = make([]uint64, len(s.apps))
		for i := range s.apps {
			st.Apps[i] = s.apps[i].requests.Load()
		}
	}
	return st
}

// appCounter is one named backend's name and request count.
type appCounter struct {
	name     []byte // AppName, the value of AppHeader
	requests atomic.Uint64
}

// appOf is the named backend a connection was accepted for (nil for the
// one unnamed backend, and for conns not from a counting listener).
func (s *Server) appOf(c net.Conn) *appCounter {
	if len(s.apps) == 0 {
		return nil
	}
	if cc, ok := c.(*countedConn); ok && cc.l.app > 0 {
		return &s.apps[cc.l.app-1]
	}
	return nil
}

// Close stops the listeners, releases requests held by a stall window or a
// /delay (they are answered at once), waits up to 5s for busy connections
// to finish, cuts whatever remains and returns when every handler is done.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Server) shutdown() error {
	var errs []error
	if s.h3 != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.h3.Shutdown(ctx) // GOAWAY, then cut connections after 1s
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			errs = append(errs, fmt.Errorf("backend: stop HTTP/3: %v", err))
		}
		_ = s.qln.Close()
		_ = s.udp.Close()
		<-s.h3Done
	}

	if s.h2 != nil {
		// Stop accepting first, then GOAWAY every HTTP/2 connection.
		_ = s.disp.Close()
		if !s.h2.shutdown(s.closeGrace) {
			s.closeConns()
			if !s.h2.shutdown(closeGrace) {
				errs = append(errs, errors.New("backend: HTTP/2 connections still busy after close"))
			}
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), s.closeGrace)
	err := s.fast.ShutdownWithContext(ctx)
	cancel()
	// Serve may not have registered its listener yet (Close right after
	// Start); closing it here makes that Serve return at once.
	s.closeListeners()
	if errors.Is(err, context.DeadlineExceeded) {
		s.closeConns()
		deadline := time.Now().Add(closeGrace)
		for s.fast.GetOpenConnectionsCount() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := s.fast.GetOpenConnectionsCount(); n > 0 {
			errs = append(errs, fmt.Errorf("backend: %d connections still busy after close", n))
		}
	} else if err != nil && !errors.Is(err, net.ErrClosed) {
		errs = append(errs, fmt.Errorf("backend: stop HTTP server: %v", err))
	}
	<-s.serveDone
	if s.disp != nil {
		// Connections that never showed their protocol (idle since
		// connect) are still sniffed: cut them.
		s.closeConns()
		s.disp.wg.Wait()
	}
	return errors.Join(errs...)
}

// closeListeners closes every listener.
func (s *Server) closeListeners() {
	for _, l := range s.lns {
		_ = l.Close()
	}
}

// closeConns force-closes every connection of every listener.
func (s *Server) closeConns() {
	for _, l := range s.lns {
		l.closeAll()
	}
}

// opCause strips the "listen tcp ADDR:" prefix net adds, which our messages
// already say.
func opCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
