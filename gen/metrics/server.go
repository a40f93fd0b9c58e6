package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultLinger is how long an endpoint stays up after its run: a little
// more than one scrape interval at the usual 1-4 s, so that the last
// scrape sees the final values.
const DefaultLinger = 5 * time.Second

// Server serves a registry's metrics at /metrics in the Prometheus text
// exposition format (or protobuf, to a Prometheus that asks for it).
type Server struct {
	srv  *http.Server
	done chan struct{}
	Addr net.Addr // where it listens
}

// Serve serves reg on ln (bind it first: internal/loopback) until Close.
func Serve(ln net.Listener, reg *prometheus.Registry) *Server {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("loadlab metrics: /metrics\n"))
	})
	s := &Server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{}), Addr: ln.Addr()}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed: scrapes stop; the run goes on
		}
	}()
	return s
}

// Close waits linger (or until ctx ends), then stops serving.
func (s *Server) Close(ctx context.Context, linger time.Duration) {
	if linger > 0 {
		t := time.NewTimer(linger)
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(sctx)
	<-s.done
}

// NewRegistry is a registry with the Go runtime's and the process's own
// collectors (loadlab's memory, GC and CPU beside the run's numbers).
func NewRegistry(cs ...prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	return reg
}
