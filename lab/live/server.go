package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/loadlab/loadlab/internal/loopback"
)

// Flag names the listen address's option in errors.
const Flag = "--serve"

// Server serves a Page on a listener bound before the run.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// Listen binds addr (HOST:PORT; loopback unless allowRemote) and starts
// serving page on it. A port in use or a remote address is a one-line
// error, before anything runs.
func Listen(addr string, allowRemote bool, page *Page) (*Server, error) {
	ln, err := loopback.Listen(Flag, "--allow-remote", addr, allowRemote)
	if err != nil {
		return nil, err
	}
	return Serve(ln, page), nil
}

// Serve serves page on ln until Shutdown.
func Serve(ln net.Listener, page *Page) *Server {
	s := &Server{ln: ln, done: make(chan error, 1),
		srv: &http.Server{Handler: page, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s
}

// URL is where the page is: http://HOST:PORT/.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// Shutdown stops serving: requests in flight get until ctx ends, then
// the connections are closed.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		_ = s.srv.Close() // ctx ended: close what is left
	}
	if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("live page server on %s: %w", s.ln.Addr(), serr)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stop the live page server on %s: %w", s.ln.Addr(), err)
	}
	return nil
}
