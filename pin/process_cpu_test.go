package pin

import (
	"runtime"
	"testing"
	"time"
)

// TestProcessCPUTimeCountsOtherThreads spins on another goroutine (another
// thread, as this one waits in a channel receive) and checks that the
// process total grows by that work.
func TestProcessCPUTimeCountsOtherThreads(t *testing.T) {
	start, err := ProcessCPUTime()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Duration)
	go func() {
		runtime.LockOSThread() // ThreadCPUTime must read one thread; the thread exits with the goroutine
		// Spin until 30 ms of CPU have passed on this thread, at most 5 s.
		t0, _ := ThreadCPUTime()
		deadline := time.Now().Add(5 * time.Second)
		x := 0
		for time.Now().Before(deadline) {
			for i := range 100000 {
				x += i
			}
			if now, _ := ThreadCPUTime(); now-t0 >= 30*time.Millisecond {
				done <- now - t0
				return
			}
		}
		done <- time.Duration(x % 1) //nolint:staticcheck // x % 1 keeps the busy loop's result alive so the compiler cannot drop it
	}()
	spun := <-done
	if spun < 30*time.Millisecond {
		t.Fatalf("spinning goroutine used only %v of CPU in 5s", spun)
	}
	end, err := ProcessCPUTime()
	if err != nil {
		t.Fatal(err)
	}
	if end-start < spun {
		t.Fatalf("process CPU grew by %v, less than the %v one of its threads used", end-start, spun)
	}
}
