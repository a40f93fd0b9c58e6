package scenario

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/internal/units"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/watch"
)

// ExitWatching is implemented by a Proxy that can be watched for dying
// during a step (lab/session.Proxy) and started again afterwards.
type ExitWatching interface {
	WatchExit() *watch.ExitWatcher
	Relaunch(ctx context.Context) error
}

// BackendWatching is implemented by a Session whose backend can be watched
// the same way (lab/session.Session).
type BackendWatching interface {
	WatchBackendExit() *watch.ExitWatcher
	RestartBackend(ctx context.Context) error
}

// errDied ends a unit's search after a step in which the proxy or the
// backend died: what the step measured was a dead server, not a rate limit.
// It is not an error of the unit (the unit is done, its row marked).
type errDied struct{ msg string }

func (e errDied) Error() string { return e.msg }

// lifeWatch watches the proxy and the backend over one step.
type lifeWatch struct {
	proxy, backend *watch.ExitWatcher
}

// watchLife starts watching the unit's proxy and the session's backend,
// where they can be watched.
func (u *unitRun) watchLife() lifeWatch {
	var lw lifeWatch
	if px, ok := u.px.(ExitWatching); ok {
		lw.proxy = px.WatchExit()
	}
	if be, ok := u.session.(BackendWatching); ok {
		lw.backend = be.WatchBackendExit()
	}
	return lw
}

// stop ends the watch and records on st what died, relative to the
// generator's start, with the failures of res after it.
func (lw lifeWatch) stop(st *results.Step, start time.Time, res *result.Result) {
	if lw.proxy != nil {
		if d := lw.proxy.Stop(); d != nil {
			st.ProxyExit = results.NewProcessExit(d, start, res)
		}
	}
	if lw.backend != nil {
		if d := lw.backend.Stop(); d != nil {
			st.BackendExit = results.NewProcessExit(d, start, res)
		}
	}
}

// died says so for a step in which the proxy or the backend died, starts
// what died again for the next step, records that, and returns the errDied
// that ends the unit's search (nil when nothing died). A restart that fails
// ends the unit (errUnit).
func (u *unitRun) died(ctx context.Context, st *results.Step) error {
	if st.ProxyExit == nil && st.BackendExit == nil {
		return nil
	}
	var what string
	if x := st.BackendExit; x != nil {
		what = "the backend"
		u.r.prog.printf("    step %d: the backend %s at t=%.1f s; %s requests failed after that", st.Seq, x.How(), x.T, units.Int(int64(x.FailedAfter)))
		if be, ok := u.session.(BackendWatching); ok {
			if err := be.RestartBackend(ctx); err != nil {
				x.Restart = err.Error()
			} else {
				x.Restarted = true
				u.r.prog.printf("    restarted the backend for the next step")
			}
		}
	}
	if x := st.ProxyExit; x != nil {
		what = u.spec.Profile.Name
		u.r.prog.printf("    step %d: %s %s at t=%.1f s; %s requests failed after that", st.Seq, u.spec.Profile.Name, x.How(), x.T, units.Int(int64(x.FailedAfter)))
	}
	// The proxy restarts after the backend too: its upstream connections
	// went to the old one.
	if px, ok := u.px.(ExitWatching); ok {
		if err := px.Relaunch(ctx); err != nil {
			if x := st.ProxyExit; x != nil {
				x.Restart = err.Error()
			}
		} else if x := st.ProxyExit; x != nil {
			x.Restarted = true
			u.r.prog.printf("    restarted %s for the next step", u.spec.Profile.Name)
		} else {
			u.r.prog.printf("    restarted %s too (its backend connections went to the old backend)", u.spec.Profile.Name)
		}
	}
	if err := u.r.Store.Update(func(*results.File) {}); err != nil { // the restart fields of the recorded step
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, x := range []*results.ProcessExit{st.ProxyExit, st.BackendExit} {
		if x != nil && x.Restart != "" {
			return errUnit{fmt.Errorf("step %d: %s died and could not be started again: %s", st.Seq, what, x.Restart)}
		}
	}
	return errDied{fmt.Sprintf("step %d: %s died", st.Seq, what)}
}

// diedReason is the step's reason when the proxy or the backend died in
// it, "" otherwise.
func diedReason(st *results.Step) string {
	var parts []string
	if x := st.ProxyExit; x != nil {
		parts = append(parts, fmt.Sprintf("the proxy %s at t=%.1f s", x.How(), x.T))
	}
	if x := st.BackendExit; x != nil {
		parts = append(parts, fmt.Sprintf("the backend %s at t=%.1f s", x.How(), x.T))
	}
	return strings.Join(parts, "; ")
}

// The real session's backend watch (lab/session).
func (l *labSession) WatchBackendExit() *watch.ExitWatcher     { return l.s.WatchBackendExit() }
func (l *labSession) RestartBackend(ctx context.Context) error { return l.s.RestartBackend(ctx) }

var (
	_ BackendWatching = (*labSession)(nil)
	_ ExitWatching    = (*labProxy)(nil)
)
