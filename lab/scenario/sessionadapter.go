package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/loadlab/loadlab/certs"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/lab/backend"
	"github.com/loadlab/loadlab/lab/cleanup"
	"github.com/loadlab/loadlab/lab/proxy"
	"github.com/loadlab/loadlab/lab/session"
	"github.com/loadlab/loadlab/lab/watch"
	"github.com/loadlab/loadlab/pin"
)

// SessionOpener opens real lab sessions (package lab/session). Each
// session's Close is registered with janitor (if not nil), so a signal
// handler installed with janitor.OnSignal removes namespaces and cgroups
// even when the run cannot reach its own cleanup.
func SessionOpener(janitor *cleanup.Janitor) Opener {
	return func(ctx context.Context, o session.Options) (Session, error) {
		if janitor != nil {
			o.Janitor = janitor
		}
		e, err := session.Open(ctx, o)
		if err != nil {
			return nil, err
		}
		return &labEnv{e: e}, nil
	}
}

// labEnv adapts *session.Session to Session.
type labEnv struct{ e *session.Session }

func (l *labEnv) Plan() pin.Plan                       { return l.e.Plan() }
func (l *labEnv) Net() string                          { return l.e.Net() }
func (l *labEnv) BackendStats() (backend.Stats, error) { return l.e.BackendStats() }
func (l *labEnv) TimeWait(role string) (int, error)    { return l.e.TimeWait(role) }
func (l *labEnv) Close() error                         { return l.e.Close() }
func (l *labEnv) WatchBackend(every time.Duration) *watch.Watcher {
	return l.e.WatchBackend(every)
}
func (l *labEnv) Sysctls() (map[string]string, error) { return l.e.Sysctls() }
func (l *labEnv) TCPExt() (map[string]uint64, error)  { return l.e.TCPExt() }
func (l *labEnv) Renew(ctx context.Context) (time.Duration, error) {
	return l.e.Renew(ctx)
}

func (l *labEnv) StartProxy(ctx context.Context, profile string, key certs.KeyType) (Proxy, error) {
	p, err := l.e.StartProxy(ctx, profile, key)
	if err != nil {
		return nil, err
	}
	return &labProxy{p}, nil
}

func (l *labEnv) StartServe(ctx context.Context, key certs.KeyType, f proxy.Features) (Proxy, error) {
	p, err := l.e.StartServe(ctx, key, f)
	if err != nil {
		return nil, err
	}
	return &labProxy{p}, nil
}

func (l *labEnv) GenConfig(p Proxy, base gen.Config) gen.Config {
	lp, ok := p.(*labProxy)
	if !ok {
		// A proxy from another session type cannot be aimed at; the run
		// fails on the empty URL with a usage error.
		base.URL = fmt.Sprintf("proxy %T is not from this lab session", p)
		return base
	}
	return l.e.GenConfig(lp.Proxy, base)
}

// labProxy adapts *session.Proxy to Proxy and ErrorSampler.
type labProxy struct{ *session.Proxy }

// ErrorSamples returns the first log line of each known error cause.
func (p *labProxy) ErrorSamples() map[string]string {
	_, causes, err := p.ErrorCauses()
	if err != nil || len(causes) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, c := range causes {
		out[c.Key] = c.Sample
	}
	return out
}

var (
	_ Session        = (*labEnv)(nil)
	_ BackendWatcher = (*labEnv)(nil)
	_ NetCounters    = (*labEnv)(nil)
	_ Proxy          = (*labProxy)(nil)
)
