package lab

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/loadlab/loadlab/internal/loopback"
	"github.com/loadlab/loadlab/lab/live"
	"github.com/loadlab/loadlab/lab/report"
	"github.com/loadlab/loadlab/lab/results"
	"github.com/loadlab/loadlab/lab/scenario"
)

// livePage is `lab run --serve`: the live report page and its server; nil
// without --serve (every method is a no-op on nil).
type livePage struct {
	page   *live.Page
	srv    *live.Server
	linger time.Duration
	log    io.Writer
	ended  bool
}

// startLive binds --serve's listener before anything runs: a remote
// address without --allow-remote is a UsageError, a port in use an error.
func startLive(o RunOptions) (*livePage, error) {
	if o.Serve == "" {
		return nil, nil
	}
	if o.ServeLinger < 0 {
		return nil, usagef("--serve-linger %s: give a duration of 0 or more", o.ServeLinger)
	}
	page := &live.Page{Log: o.Log}
	srv, err := live.Listen(o.Serve, o.AllowRemote, page)
	if errors.Is(err, loopback.ErrRemote) {
		return nil, UsageError{err}
	}
	if err != nil {
		return nil, err
	}
	return &livePage{page: page, srv: srv, linger: o.ServeLinger, log: o.Log}, nil
}

// begin shows the run as it stands before the first step and says where.
func (l *livePage) begin(f *results.File) {
	if l == nil {
		return
	}
	l.page.Begin(f)
	fmt.Fprintf(l.log, "loadlab: live report at %s (reloads every %s)\n", l.srv.URL(), live.Refresh)
}

// observer is the page as the runner's Observer (nil without --serve).
func (l *livePage) observer() scenario.Observer {
	if l == nil {
		return nil
	}
	return l.page
}

// end shows the final report (rep, or f's when rep is nil), keeps serving
// it for --serve-linger unless ctx ends first (Ctrl-C), and stops.
func (l *livePage) end(ctx context.Context, f *results.File, rep *report.Report, how string) {
	if l == nil {
		return
	}
	l.page.End(f, rep, how, time.Now())
	if l.linger > 0 && ctx.Err() == nil {
		fmt.Fprintf(l.log, "loadlab: serving the final report at %s for %s (Ctrl-C ends it)\n", l.srv.URL(), l.linger)
		t := time.NewTimer(l.linger)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	l.close()
}

// close stops the server (at once, for requests in flight within 2 s).
func (l *livePage) close() {
	if l == nil || l.ended {
		return
	}
	l.ended = true
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := l.srv.Shutdown(ctx); err != nil {
		fmt.Fprintf(l.log, "loadlab: %v\n", err)
	}
}
