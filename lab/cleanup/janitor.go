package cleanup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Janitor collects undo steps and runs them last-added first. The zero
// Janitor is ready to use and safe for concurrent use.
type Janitor struct {
	mu    sync.Mutex // guards steps
	steps []step
	run   sync.Mutex // one Run at a time: a second caller waits for the first
}

type step struct {
	what string
	undo func() error
}

// Add registers undo, described by what (for error messages), e.g.
// j.Add("stop nginx", func() error { return p.Stop(5*time.Second) }).
func (j *Janitor) Add(what string, undo func() error) {
	j.mu.Lock()
	j.steps = append(j.steps, step{what, undo})
	j.mu.Unlock()
}

// Run runs every step added so far, last first, each once, and returns their
// errors joined ("what: error"). Every step runs even if an earlier one
// fails. Calling Run again runs only steps added since; a Run that starts
// while another is running waits for it, so a deferred Run and a signal
// handler's Run both return only when cleanup is done.
func (j *Janitor) Run() error {
	j.run.Lock()
	defer j.run.Unlock()
	var errs []error
	for {
		j.mu.Lock()
		if len(j.steps) == 0 {
			j.mu.Unlock()
			return errors.Join(errs...)
		}
		s := j.steps[len(j.steps)-1]
		j.steps = j.steps[:len(j.steps)-1]
		j.mu.Unlock()
		if err := s.undo(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.what, err))
		}
	}
}

// exit ends the process after a second signal; a variable for tests.
var exit = os.Exit

// OnSignal returns a context cancelled at the first SIGINT or SIGTERM, so
// the run can wind down and reach its deferred Run. At a second signal it
// runs the janitor right away and exits (status 130 for SIGINT, 143 for
// SIGTERM), reporting cleanup errors on stderr. stop releases the signals.
func (j *Janitor) OnSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		count := 0
		for {
			select {
			case <-quit:
				return
			case sig := <-ch:
				count++
				cancel()
				if count < 2 {
					continue
				}
				if err := j.Run(); err != nil {
					fmt.Fprintln(os.Stderr, "loadlab: cleanup:", err)
				}
				code := 130
				if sig == syscall.SIGTERM {
					code = 143
				}
				exit(code)
				return
			}
		}
	}()
	return ctx, func() {
		once.Do(func() {
			signal.Stop(ch)
			close(quit)
			cancel()
		})
	}
}
