package scenario

import (
	"context"
	"time"

	"github.com/loadlab/loadlab/certs"
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
		s, err := session.Open(ctx, o)
		if err != nil {
			return nil, err
		}
		return &labSession{s: s}, nil
	}
}

// labSession adapts *session.Session to Session.
type labSession struct{ s *session.Session }

func (l *labSession) Plan() pin.Plan                       { return l.s.Plan() }
func (l *labSession) Net() string                          { return l.s.Net() }
func (l *labSession) BackendStats() (backend.Stats, error) { return l.s.BackendStats() }
func (l *labSession) TimeWait(role string) (int, error)    { return l.s.TimeWait(role) }
func (l *labSession) Close() error                         { return l.s.Close() }
func (l *labSession) WatchBackend(every time.Duration) *watch.Watcher {
	return l.s.WatchBackend(every)
}
func (l *labSession) Sysctls() (map[string]string, error) { return l.s.Sysctls() }
func (l *labSession) TCPExt() (map[string]uint64, error)  { return l.s.TCPExt() }
func (l *labSession) Renew(ctx context.Context) (time.Duration, error) {
	return l.s.Renew(ctx)
}

func (l *labSession) StartProxy(ctx context.Context, profile string, key certs.KeyType) (Proxy, error) {
	p, err := l.s.StartProxy(ctx, profile, key)
	if err != nil {
		return nil, err
	}
	return &labProxy{p}, nil
}

func (l *labSession) StartServe(ctx context.Context, key certs.KeyType, f proxy.Features) (Proxy, error) {
	p, err := l.s.StartServe(ctx, key, f)
	if err != nil {
		return nil, err
	}
	return &labProxy{p}, nil
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
	_ Session        = (*labSession)(nil)
	_ BackendWatcher = (*labSession)(nil)
	_ NetCounters    = (*labSession)(nil)
	_ Proxy          = (*labProxy)(nil)
)
