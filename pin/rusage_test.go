package pin

import (
	"runtime"
	"testing"
	"time"
)

func TestThreadCPUTimeGrows(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, err := ThreadCPUTime()
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the thread has used 30ms of CPU, bounded by 5s wall time.
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 100000 {
			x += i
		}
		now, err := ThreadCPUTime()
		if err != nil {
			t.Fatal(err)
		}
		if now-start >= 30*time.Millisecond {
			return
		}
	}
	t.Fatalf("thread CPU time did not reach 30ms in 5s of spinning (x=%d)", x)
}

func TestThreadCPUTimeIsPerThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start, _ := ThreadCPUTime()
	// Another thread burns CPU; this one sleeps, so its time barely moves.
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		until := time.Now().Add(50 * time.Millisecond)
		for time.Now().Before(until) {
		}
		close(done)
	}()
	<-done
	end, _ := ThreadCPUTime()
	if end-start > 40*time.Millisecond {
		t.Fatalf("sleeping thread gained %v of CPU time while another thread spun 50ms", end-start)
	}
}

func TestThreadCPUTimeNoAlloc(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := ThreadCPUTime(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("ThreadCPUTime allocates %v times per call", allocs)
	}
}
