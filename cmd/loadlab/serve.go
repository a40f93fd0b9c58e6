package main

import (
	"runtime"

	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loadlab/loadlab/pin"

	"github.com/spf13/cobra"

	"github.com/loadlab/loadlab/lab/backend"
)

// serveEndpoints is the endpoint list printed when serving starts.
const serveEndpoints = "/1k /100k /1m /echo /status/NNN /chunked /close /delay/D /ws /_stats"

func newServeCmd() *cobra.Command {
	var cfg backend.Config
	var cpus string
	var mf metricsFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the built-in backend (fixed bodies, echo, stall injection)",
		Long: `Run the lab's backend until SIGINT or SIGTERM.

Endpoints:
  /1k /100k /1m   exactly 1024 (JSON), 102400 and 1048576 bytes, same bytes every time
  /echo           method, URI, protocol, remote address and every request header
  /status/NNN     that status (200-599) with a short body
  /chunked        the 1k body with Transfer-Encoding: chunked (four chunks)
  /close          the 1k body with Connection: close
  /delay/D        sleep D (e.g. 50ms; bare numbers are ms; capped at 10s), then 1k
  /ws             101 to an Upgrade: websocket with Connection: Upgrade (both
                  reported back as X-Loadlab-Upgrade/-Connection), then an echo
  /_stats         {"accepted": n, "open": n, "requests": n}: TCP connections
                  accepted and open, requests served (/_stats itself excluded);
                  with --app also "apps": [n, ...], each named backend's requests
Anything else is 404.

--app ADDR, repeated, makes the one process N backends instead (the lab's
hosts scenarios: seed 001's twenty apps behind one proxy): one plain HTTP/1.1
listener per address, named app01, app02, ... in order, each naming itself in
an X-Loadlab-Backend header on every response; --listen is then not used.

Stalls (--stall-every E --stall-for F, F < E): windows [start+k*E, start+k*E+F)
for k = 1, 2, ...; a request arriving inside a window is answered when it ends,
like a stop-the-world pause. /_stats never stalls.

With --tls-cert and --tls-key it serves HTTPS (TLS 1.2 and 1.3); --h3 also
serves HTTP/3 on the same port number over UDP. --h2 also serves HTTP/2 on the
same TCP port: h2c with prior knowledge in plain text, ALPN h2 over TLS
(HTTP/1.1 clients are still served); /close then answers and sends GOAWAY.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Validate(); err != nil {
				return usagef("serve: %w", err)
			}
			if cpus != "" {
				list, err := pin.ParseList(cpus)
				if err != nil {
					return usagef("serve: --cpus: %v", err)
				}
				if err := pin.CheckAllowed(list); err != nil {
					return usagef("serve: --cpus: %v", err)
				}
				if err := pin.RestrictProcess(list); err != nil {
					return fmt.Errorf("serve: %v", err)
				}
				runtime.GOMAXPROCS(len(list))
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runServe(ctx, cfg, cmd.ErrOrStderr(), func(s *backend.Server) (*metricsEndpoint, error) {
				if mf.addr == "" {
					return nil, nil
				}
				labels, err := mf.labelSet(time.Now())
				if err != nil {
					return nil, err
				}
				return mf.start(cmd.ErrOrStderr(), backendCollector{s: s, labels: labels})
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Listen, "listen", backend.DefaultListen, "TCP address to listen on (port 0 picks a free port)")
	f.StringVar(&cpus, "cpus", "", "restrict the process to these CPUs, e.g. 0 or 0,2-3")
	f.DurationVar(&cfg.StallEvery, "stall-every", 0, "start a stall window every D (with --stall-for)")
	f.DurationVar(&cfg.StallFor, "stall-for", 0, "length of each stall window (shorter than --stall-every)")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "PEM certificate: serve HTTPS (with --tls-key)")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "PEM private key for --tls-cert")
	f.BoolVar(&cfg.H3, "h3", false, "also serve HTTP/3 on the same port over UDP (needs TLS)")
	f.BoolVar(&cfg.H2, "h2", false, "also serve HTTP/2 on the same port (h2c prior knowledge; ALPN h2 with TLS)")
	f.Uint32Var(&cfg.H2MaxStreams, "h2-max-streams", 0, "SETTINGS_MAX_CONCURRENT_STREAMS for HTTP/2 (with --h2; default 250)")
	f.IntVar(&cfg.Concurrency, "concurrency", backend.DefaultConcurrency, "maximum concurrent connections")
	f.StringArrayVar(&cfg.Apps, "app", nil, "serve a named backend on this TCP address instead of --listen (repeat: app01, app02, ... in order; plain HTTP/1.1)")
	mf.register(f, "the backend (connections accepted and open, requests served)")
	// serve's --allow-remote only ever allowed the metrics listener: it
	// stays, deprecated, as --metrics-allow-remote's old name.
	f.BoolVar(&mf.allowRemote, "allow-remote", false, "old name of --"+metricsAllowRemote)
	f.MarkDeprecated("allow-remote", "use --"+metricsAllowRemote) //nolint:errcheck // fails only for a flag not defined: defined just above
	return cmd
}

// runServe starts the backend, prints one "serving" line to w, serves until
// ctx is done and shuts down cleanly.
func runServe(ctx context.Context, cfg backend.Config, w io.Writer, serveMetrics func(*backend.Server) (*metricsEndpoint, error)) error {
	s, err := backend.Start(cfg)
	if err != nil {
		return err
	}
	var ep *metricsEndpoint
	if serveMetrics != nil {
		if ep, err = serveMetrics(s); err != nil {
			s.Close()
			return err
		}
	}
	defer ep.stop(true) // the backend has no final values to linger for
	var extra []string
	if cfg.H2 {
		mode := "h2c with prior knowledge"
		if cfg.TLS() {
			mode = "ALPN h2"
		}
		extra = append(extra, "HTTP/2 ("+mode+") on the same port")
	}
	if cfg.H3 {
		extra = append(extra, "HTTP/3 on udp "+s.Addr())
	}
	if cfg.StallEvery > 0 {
		extra = append(extra, fmt.Sprintf("stalls of %s every %s", cfg.StallFor, cfg.StallEvery))
	}
	if len(cfg.Apps) > 0 {
		apps := make([]string, 0, len(cfg.Apps))
		for i, a := range s.Addrs() {
			apps = append(apps, backend.AppName(i+1)+" http://"+a)
		}
		extra = append(extra, fmt.Sprintf("%d named backends: %s", len(apps), strings.Join(apps, " ")))
	}
	suffix := ""
	if len(extra) > 0 {
		suffix = "; " + strings.Join(extra, "; ")
	}
	fmt.Fprintf(w, "serving %s (endpoints: %s%s)\n", s.URL(), serveEndpoints, suffix)
	<-ctx.Done()
	return s.Close()
}

// backendCollector exposes the backend's own counters (its /_stats) at
// each scrape.
type backendCollector struct {
	s      *backend.Server
	labels map[string]string
}

func (backendCollector) Describe(chan<- *prometheus.Desc) {}

func (b backendCollector) Collect(ch chan<- prometheus.Metric) {
	st := b.s.Stats()
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, b.labels) }
	ch <- prometheus.MustNewConstMetric(d("loadlab_backend_accepted_total", "TCP connections the backend accepted (plain or TLS)."), prometheus.CounterValue, float64(st.Accepted))
	ch <- prometheus.MustNewConstMetric(d("loadlab_backend_open_connections", "TCP connections open now."), prometheus.GaugeValue, float64(st.Open))
	ch <- prometheus.MustNewConstMetric(d("loadlab_backend_requests_total", "Requests served, all protocols (/_stats excluded)."), prometheus.CounterValue, float64(st.Requests))
}
