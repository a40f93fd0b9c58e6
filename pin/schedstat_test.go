package pin

import (
	"runtime"
	"testing"
	"time"
)

func TestParseSchedStat(t *testing.T) {
	st, err := parseSchedStat([]byte("284630708 285325680 75\n"))
	if err != nil || st.Run != 284630708 || st.Wait != 285325680 {
		t.Fatalf("got %+v, %v", st, err)
	}
	if _, err := parseSchedStat([]byte("garbage")); err == nil {
		t.Fatal("malformed line accepted")
	}
}

func TestParseProcStat(t *testing.T) {
	const stat = "cpu  21666 0 6590 47638 290 0 65 52 0 0\n" +
		"cpu0 10589 0 3014 24489 17 0 9 27 0 0\n" +
		"cpu1 11076 1 3575 23148 272 3 55 25 0 0\n" +
		"intr 587510 0 0 0\n"
	got, err := parseProcStat([]byte(stat), 1)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Second / userHZ
	want := CPUTimes{Busy: (11076 + 1 + 3575 + 3) * tick, Idle: (23148 + 272) * tick, IOWait: 272 * tick, SoftIRQ: 55 * tick, Steal: 25 * tick}
	if got != want {
		t.Errorf("cpu1: got %+v, want %+v", got, want)
	}
	if _, err := parseProcStat([]byte(stat), 2); err == nil {
		t.Error("cpu2 found in a 2-CPU /proc/stat")
	}
	// cpu10 must not match a search for cpu1
	if got, _ := parseProcStat([]byte("cpu10 1 0 0 0 0 0 0 0\ncpu1 2 0 0 0 0 0 0 0\n"), 1); got.Busy != 2*tick {
		t.Errorf("cpu1 after cpu10: %+v", got)
	}
}

func TestStatProcessor(t *testing.T) {
	// A command name with spaces and a ')' in it.
	line := "1234 (a b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 100 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n"
	cpu, ok := statProcessor([]byte(line))
	if !ok || cpu != 3 {
		t.Fatalf("processor = %d, %v; want 3", cpu, ok)
	}
}

// TestThreadSchedStatSeesWaiting pins this thread and a spinning thread to
// one CPU: the kernel shares the CPU between them, so this thread spends
// about as long runnable-but-waiting as it spends running.
func TestThreadSchedStatSeesWaiting(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpus, err := Allowed()
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpus[len(cpus)-1]
	prev, err := getAffinity(0)
	if err != nil {
		t.Fatal(err)
	}
	defer setAffinity(0, prev)
	if err := PinThread(cpu); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	spun := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := PinThread(cpu); err != nil {
			close(spun)
			return
		}
		close(spun)
		for {
			select {
			case <-stop:
				return
			default: //nolint:staticcheck // the loop spins on purpose: it burns CPU until stopped
			}
		}
	}()
	<-spun
	before, err := ThreadSchedStat()
	if err != nil {
		close(stop)
		t.Skip(err)
	}
	t0 := time.Now()
	for time.Since(t0) < 300*time.Millisecond {
	}
	after, _ := ThreadSchedStat()
	wall := time.Since(t0)
	close(stop)
	run, wait := after.Run-before.Run, after.Wait-before.Wait
	t.Logf("wall %v run %v wait %v", wall, run, wait)
	// A thread that never sleeps is either running or waiting to run:
	// run + wait is its wall time, less the moments the Go runtime parks it
	// (a preemption request or a GC pause stops a locked goroutine's
	// thread), so at least most of it and never more. With a spinner on
	// the same CPU it must have waited for a good part of it (CFS shares
	// the CPU; other tasks may take more, never less).
	if sum := run + wait; sum < wall*6/10 || sum > wall*11/10 {
		t.Errorf("run %v + wait %v = %v, want about the wall time %v", run, wait, sum, wall)
	}
	if wait < wall/5 {
		t.Errorf("wait %v of %v sharing a CPU with a spinner: the waiting was not seen", wait, wall)
	}
}

func TestTasksListsThisThread(t *testing.T) {
	tasks, err := Tasks(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) == 0 {
		t.Fatal("no threads listed")
	}
	cpus, _ := Allowed()
	for _, tk := range tasks {
		if !cpus.Contains(tk.CPU) {
			// A thread may have last run on a CPU outside the current
			// mask only if the mask changed; the test never changes it.
			t.Errorf("thread %d on cpu %d outside %v", tk.TID, tk.CPU, cpus)
		}
	}
}
