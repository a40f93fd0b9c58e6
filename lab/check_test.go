package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/check"
)

// fakeCheck stands in for check.Run for the length of a test: run gets the
// configuration lab check made of its flags.
func fakeCheck(t *testing.T, run func(ctx context.Context, c check.Config) (check.Report, error)) {
	t.Helper()
	old := checkRun
	checkRun = run
	t.Cleanup(func() { checkRun = old })
}

func goodCheck() CheckOptions {
	return CheckOptions{Profiles: "nginx-stock,haproxy", Keys: "p256", Net: NetLoopback, IdleSamples: 1, ServerCPUs: "1", Memory: "256MiB"}
}

// lab check's flags become the check's configuration: the profiles in the
// order given, the keys, the network, CPUs, memory limit and log; a bad
// flag is one line and a UsageError, and the check does not start.
func TestCheckFlags(t *testing.T) {
	var got check.Config
	started := 0
	fakeCheck(t, func(ctx context.Context, c check.Config) (check.Report, error) {
		started++
		got = c
		return check.Report{}, nil
	})
	var log strings.Builder
	o := goodCheck()
	o.Log = &log
	if _, err := Check(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got.Profiles {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"nginx-stock", "haproxy"}) {
		t.Errorf("profiles %q, want nginx-stock, haproxy", names)
	}
	if got.Session.Net != NetLoopback || got.Session.MemoryLimit != 256<<20 || got.Session.ServerCPUs.String() != "1" || len(got.Session.Keys) != 1 {
		t.Errorf("session %+v: want loopback, 256 MiB, server CPU 1, one key type", got.Session)
	}
	if got.Log != &log || got.Session.Log != &log || got.Session.Janitor == nil {
		t.Error("the check logs elsewhere or has no janitor")
	}

	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte("name: mine\nextends: haproxy\nbinary: "+filepath.Join(dir, "nope")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		set  func(*CheckOptions)
		want string
	}{
		{"unknown profile", func(o *CheckOptions) { o.Profiles = "envoy" }, `"envoy"`},
		{"unknown key", func(o *CheckOptions) { o.Keys = "ed25519" }, "--keys: "},
		{"bad net", func(o *CheckOptions) { o.Net = "bridge" }, `--net "bridge": use loopback or netns`},
		{"bad CPUs", func(o *CheckOptions) { o.GenCPUs = "x" }, "--loadgen-cpus: "},
		{"bad memory", func(o *CheckOptions) { o.Memory = "lots" }, "--memory: "},
		{"no idle samples", func(o *CheckOptions) { o.IdleSamples = 0 }, "--idle-samples must be at least 1"},
		{"negative idle wait", func(o *CheckOptions) { o.IdleQuiet = -time.Second }, "--idle-samples must be at least 1"},
		{"a profile file's binary missing", func(o *CheckOptions) { o.Profiles = mine }, "profile mine (" + mine + "): "},
		{"--bin without a path", func(o *CheckOptions) { o.Bins = []string{"haproxy"} }, `--bin "haproxy": give NAME=PATH`},
	} {
		t.Run(c.name, func(t *testing.T) {
			started = 0
			o := goodCheck()
			c.set(&o)
			_, err := Check(context.Background(), o)
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("%q, want one line with %q", msg, c.want)
			}
			if ue := (UsageError{}); !errors.As(err, &ue) {
				t.Errorf("%v is not a UsageError", err)
			}
			if started != 0 {
				t.Error("the check started on bad flags")
			}
		})
	}
}

// What the check left with its janitor is undone on every return; a check
// cut short by its context returns its rows, says it was interrupted and
// wraps ErrInterrupted; a failing check's error is one line.
func TestCheckCleansUpAndInterrupts(t *testing.T) {
	for _, c := range []struct {
		name        string
		cancel, err bool
	}{{"finished", false, false}, {"interrupted", true, false}, {"failed", false, true}} {
		t.Run(c.name, func(t *testing.T) {
			undone := 0
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fakeCheck(t, func(cctx context.Context, cfg check.Config) (check.Report, error) {
				cfg.Session.Janitor.Add("a test cgroup", func() error { undone++; return nil })
				rep := check.Report{Rows: []check.Row{{Profile: "nginx-stock"}}}
				switch {
				case c.cancel: // a signal mid-check
					cancel()
					<-cctx.Done()
					return rep, cctx.Err()
				case c.err:
					return rep, errors.New("start nginx-stock:\nexited with status 1")
				}
				return rep, nil
			})
			o := goodCheck()
			rep, err := Check(ctx, o)
			if undone != 1 {
				t.Errorf("the janitor's work ran %d times, want once", undone)
			}
			switch {
			case c.cancel:
				if !errors.Is(err, ErrInterrupted) || !rep.Interrupted || len(rep.Rows) != 1 {
					t.Errorf("err %v, interrupted %v, %d rows: want ErrInterrupted, true, 1", err, rep.Interrupted, len(rep.Rows))
				}
			case c.err:
				if err == nil || strings.Contains(err.Error(), "\n") {
					t.Errorf("err %q, want one line", err)
				}
			default:
				if err != nil || rep.Interrupted {
					t.Errorf("err %v, interrupted %v", err, rep.Interrupted)
				}
			}
		})
	}
}
