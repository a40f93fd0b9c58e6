package backend

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/internal/fields"
)

// Defaults applied by Start to zero Config fields.
const (
	DefaultListen      = "127.0.0.1:8080"
	DefaultConcurrency = 256 * 1024
)

// Config configures a backend Server. The zero value serves plain HTTP on
// DefaultListen without stalls.
type Config struct {
	// Listen is the TCP address (host:port; port 0 picks a free one).
	Listen string
	// StallEvery and StallFor inject stall windows (see the package doc):
	// both zero for none, or both positive with StallFor < StallEvery.
	StallEvery, StallFor time.Duration
	// TLSCert and TLSKey are PEM files; with both set the server speaks
	// HTTPS (TLS 1.2 and 1.3) instead of plain HTTP on Listen.
	TLSCert, TLSKey string
	// H3 also serves the endpoints over HTTP/3 on the same port number over
	// UDP. It requires TLS.
	H3 bool
	// H2 also serves HTTP/2 on the TCP listener: over TLS to clients that
	// pick h2 by ALPN, in plain text to clients that open with the HTTP/2
	// preface (h2c with prior knowledge). HTTP/1.1 keeps working on the
	// same port.
	H2 bool
	// H2MaxStreams is the SETTINGS_MAX_CONCURRENT_STREAMS the HTTP/2
	// listener advertises; zero means DefaultH2MaxStreams.
	H2MaxStreams uint32
	// Concurrency caps concurrent connections (fasthttp's Concurrency);
	// zero means DefaultConcurrency.
	Concurrency int
	// Apps, if set, makes the server N named backends in one process
	// instead of one: it listens on each of these TCP addresses (Listen
	// is not used; port 0 picks a free one), and the backend on Apps[i]
	// is AppName(i+1): every response it sends carries
	// X-Loadlab-Backend: appNN, and /_stats counts its requests apart
	// (Stats.Apps). The lab's hosts scenarios route appNN.lab.test to it
	// (seed 001's twenty whoami containers). Apps serve plain HTTP/1.1.
	Apps []string
}

// MaxApps bounds Config.Apps: each is a listener and a worker pool.
const MaxApps = 1000

// AppHeader is the response header a named backend names itself in.
const AppHeader = "X-Loadlab-Backend"

// AppDomain is the domain of the named backends' host names: appNN.lab.test
// routes to backend appNN (AppHost). .test is reserved (RFC 2606): no
// resolver answers it, so a name never leaves the lab.
const AppDomain = "lab.test"

// AppHost is the host name the lab routes to the i-th named backend
// (1-based): app01.lab.test, ...
func AppHost(i int) string { return AppName(i) + "." + AppDomain }

// AppName is the name of the i-th named backend (1-based): app01, app02,
// ..., app100.
func AppName(i int) string { return fmt.Sprintf("app%02d", i) }

// withDefaults returns cfg with zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.H2 && cfg.H2MaxStreams == 0 {
		cfg.H2MaxStreams = DefaultH2MaxStreams
	}
	return cfg
}

// TLS reports whether cfg serves HTTPS.
func (cfg Config) TLS() bool { return cfg.TLSCert != "" && cfg.TLSKey != "" }

// Validate reports the first inconsistency in cfg as a one-line error that
// names the flag to fix. Start calls it too.
func (cfg Config) Validate() error {
	switch {
	case cfg.StallEvery < 0 || cfg.StallFor < 0:
		return errors.New("stall durations must not be negative")
	case (cfg.StallEvery == 0) != (cfg.StallFor == 0):
		return fields.Errorf("set both {StallEvery} and {StallFor}, or neither")
	case cfg.StallEvery > 0 && cfg.StallFor >= cfg.StallEvery:
		return fields.Errorf("{StallFor} (%s) must be shorter than {StallEvery} (%s)", cfg.StallFor, cfg.StallEvery)
	case (cfg.TLSCert == "") != (cfg.TLSKey == ""):
		return fields.Errorf("set both {TLSCert} and {TLSKey}, or neither")
	case cfg.H3 && !cfg.TLS():
		return fields.Errorf("{H3} requires {TLSCert} and {TLSKey} (HTTP/3 always uses TLS)")
	case cfg.H2MaxStreams > 0 && !cfg.H2:
		return fields.Errorf("{H2MaxStreams} needs {H2}")
	case cfg.Concurrency < 0:
		return errors.New("concurrency must not be negative")
	case len(cfg.Apps) > MaxApps:
		return fields.Errorf("{Apps}: %d backends, at most %d", len(cfg.Apps), MaxApps)
	case len(cfg.Apps) > 0 && (cfg.TLS() || cfg.H2 || cfg.H3):
		return fields.Errorf("{Apps} serve plain HTTP/1.1 (as seed 001's whoami backends): drop {TLSCert}, {H2} and {H3}")
	}
	for i, a := range cfg.Apps {
		if strings.TrimSpace(a) == "" {
			return fields.Errorf("{Apps}: address %d is empty: give host:port", i+1)
		}
	}
	return nil
}
