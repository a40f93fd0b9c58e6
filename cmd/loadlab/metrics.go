package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/loadlab/loadlab/gen/metrics"
	"github.com/loadlab/loadlab/internal/loopback"
)

// metricsFlags are --metrics-addr, --metrics-allow-remote,
// --metrics-linger and --metrics-label, the same on gen, lab run and
// serve.
type metricsFlags struct {
	addr        string
	allowRemote bool
	linger      time.Duration
	labels      []string
}

func (m *metricsFlags) register(fl *pflag.FlagSet, what string) {
	fl.StringVar(&m.addr, "metrics-addr", "", "serve Prometheus metrics of "+what+" at http://HOST:PORT/metrics while it runs (loopback unless --metrics-allow-remote)")
	fl.BoolVar(&m.allowRemote, metricsAllowRemote, false, "allow a --metrics-addr off loopback, reachable from other machines")
	fl.DurationVar(&m.linger, "metrics-linger", metrics.DefaultLinger, "keep --metrics-addr up this long after the run, so that the last scrape sees the final values")
	fl.StringArrayVar(&m.labels, "metrics-label", nil, "a label K=V on every metric (repeatable); the default run label is the start time, e.g. run=20261204T130405Z")
}

// labelSet parses --metrics-label into labels, with run defaulted to
// the start time.
func (m *metricsFlags) labelSet(now time.Time) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range m.labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !validLabel(k) {
			return nil, usagef("bad --metrics-label %q: want NAME=VALUE with NAME of letters, digits and _ (not starting with a digit or __)", kv)
		}
		out[k] = v
	}
	if _, ok := out["run"]; !ok {
		out["run"] = now.UTC().Format("20060102T150405Z")
	}
	return out, nil
}

func validLabel(k string) bool {
	if k == "" || strings.HasPrefix(k, "__") || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// metricsEndpoint is a started --metrics-addr (nil when the flag is
// unset: its methods then do nothing).
type metricsEndpoint struct {
	srv    *metrics.Server
	linger time.Duration
}

// metricsAllowRemote is the one flag that allows a metrics listener off
// loopback (--allow-remote is about targets, and lab run's --serve).
const metricsAllowRemote = "metrics-allow-remote"

// start binds --metrics-addr (before the run: an address in use or not
// allowed is a usage error) and serves cs there.
func (m *metricsFlags) start(log io.Writer, cs ...prometheus.Collector) (*metricsEndpoint, error) {
	if m.addr == "" {
		return nil, nil
	}
	if m.linger < 0 {
		return nil, usagef("--metrics-linger must not be negative (got %s)", m.linger)
	}
	ln, err := loopback.Listen("--metrics-addr", "--"+metricsAllowRemote, m.addr, m.allowRemote)
	if err != nil {
		return nil, usageError{err}
	}
	srv := metrics.Serve(ln, metrics.NewRegistry(cs...))
	fmt.Fprintf(log, "loadlab: metrics at http://%s/metrics\n", srv.Addr)
	return &metricsEndpoint{srv: srv, linger: m.linger}, nil
}

// stop keeps the endpoint up for the linger (none when the run was
// interrupted: the user asked to stop), then closes it.
func (e *metricsEndpoint) stop(interrupted bool) {
	if e == nil {
		return
	}
	linger := e.linger
	if interrupted {
		linger = 0
	}
	e.srv.Close(context.Background(), linger)
}
