package cleanup

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestJanitorOrderErrorsOnce(t *testing.T) {
	var j Janitor
	var got []string
	for _, n := range []string{"netns", "cgroup", "proxy"} {
		j.Add("undo "+n, func() error {
			got = append(got, n)
			if n == "cgroup" {
				return errors.New("busy")
			}
			return nil
		})
	}
	err := j.Run()
	if strings.Join(got, ",") != "proxy,cgroup,netns" {
		t.Errorf("ran %v, want reverse order and every step despite the error", got)
	}
	if err == nil || err.Error() != "undo cgroup: busy" {
		t.Errorf("Run = %v", err)
	}
	got = nil
	if err := j.Run(); err != nil || len(got) != 0 {
		t.Errorf("second Run ran %v, %v", got, err)
	}
	j.Add("late", func() error { got = append(got, "late"); return nil })
	if err := j.Run(); err != nil || strings.Join(got, ",") != "late" {
		t.Errorf("Run after Add ran %v, %v", got, err)
	}
}

// Two concurrent Runs: each step runs once and both return only after all
// steps are done.
func TestJanitorConcurrentRun(t *testing.T) {
	var j Janitor
	var mu sync.Mutex
	count := 0
	for i := 0; i < 5; i++ {
		j.Add("step", func() error {
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			count++
			mu.Unlock()
			return nil
		})
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = j.Run()
			mu.Lock()
			defer mu.Unlock()
			if count != 5 {
				t.Errorf("a Run returned with %d of 5 steps done", count)
			}
		}()
	}
	wg.Wait()
}

func TestOnSignal(t *testing.T) {
	codes := make(chan int, 1)
	exit = func(code int) { codes <- code }
	t.Cleanup(func() { exit = os.Exit })
	var j Janitor
	cleaned := make(chan struct{})
	j.Add("mark", func() error { close(cleaned); return nil })
	ctx, stop := j.OnSignal(context.Background())
	defer stop()

	_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first SIGTERM did not cancel the context")
	}
	select {
	case <-cleaned:
		t.Fatal("the first signal ran the janitor; it should leave that to the run")
	case <-time.After(50 * time.Millisecond):
	}
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGTERM)
	select {
	case code := <-codes:
		if code != 143 {
			t.Errorf("exit code %d, want 143", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second SIGTERM did not exit")
	}
	select {
	case <-cleaned:
	default:
		t.Error("exited without running the janitor")
	}
}
