package scenario

import (
	"context"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/lab/watch"
	"github.com/loadlab/loadlab/pin"
)

// Session is one lab session: backend, namespaces, cgroups
// (lab/session.Session).
type Session interface {
	Plan() pin.Plan
	Net() string
	BackendStats() (backend.Stats, error)
	StartProxy(ctx context.Context, profile string, key certs.KeyType) (Proxy, error)
	// StartServe starts the generator's reference target where a proxy
	// would run: loadlab serve over TLS (with f.H2, f.H3 also HTTP/2,
	// HTTP/3) on the proxy's CPUs and namespace.
	StartServe(ctx context.Context, key certs.KeyType, f proxy.Features) (Proxy, error)
	TimeWait(role string) (int, error)
	// Renew gives fresh network namespaces (netns mode) with the backend
	// and the running proxies restarted in them; a no-op in loopback mode.
	Renew(ctx context.Context) (time.Duration, error)
	Close() error
}

// Proxy is one running proxy (lab/session.Proxy).
type Proxy interface {
	Profile() proxy.Profile
	Key() certs.KeyType
	Version() string
	// Aim says where the generator aims at the proxy, and where it runs.
	Aim() session.Aim
	Watch(every time.Duration) *watch.Watcher
	IdleMemory(ctx context.Context, quiet time.Duration, samples int, every time.Duration) (watch.Idle, error)
	ErrorLog() (lines int, causes map[string]int, err error)
	Stop() error
}

// NetCounters is optionally implemented by a Session: the scenario's
// sysctls as the proxy's namespace reads them back, and that namespace's
// TcpExt counters (both nil in loopback mode).
type NetCounters interface {
	Sysctls() (map[string]string, error)
	TCPExt() (map[string]uint64, error)
}

// ErrorSampler is optionally implemented by a Proxy: the first log line
// of each known error cause, and how many lines were too long to read
// whole.
type ErrorSampler interface {
	ErrorSamples() map[string]string
	CutLines() int
}

// Opener opens a Session with the options lab/session takes.
type Opener func(ctx context.Context, o session.Options) (Session, error)

// GenFunc runs the generator (gen.Run).
type GenFunc func(ctx context.Context, cfg gen.Config) (*result.Result, error)
