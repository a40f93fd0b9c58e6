package watch

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loadlab/loadlab/lab/cgroup"
)

// clockGroup is a test Group whose CPU counter runs at a fixed fraction of
// wall time and whose memory readings come from a script.
type clockGroup struct {
	cgroup.Group
	start time.Time
	cores float64
	mu    sync.Mutex
	mem   []uint64
	fail  bool
}

func (g *clockGroup) Name() string { return "clock" }

func (g *clockGroup) Stats() (cgroup.Stats, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.fail {
		return cgroup.Stats{}, errors.New("gone")
	}
	var m uint64
	if len(g.mem) > 0 {
		m, g.mem = g.mem[0], g.mem[1:]
	}
	// memory.current = anon (half) + kernel (a tenth) + page cache (the rest)
	return cgroup.Stats{CPUNanos: uint64(float64(time.Since(g.start).Nanoseconds()) * g.cores), MemCurrent: m, MemAnon: m / 2, MemKernel: m / 10, MemFile: m - m/2 - m/10, MemPeak: 2 * m, Procs: 1, Threads: 3}, nil
}

func TestWatcherCPUAndTimeWait(t *testing.T) {
	g := &clockGroup{start: time.Now(), cores: 0.5}
	var calls int
	var mu sync.Mutex
	w := Start(g, func() (int, error) { mu.Lock(); defer mu.Unlock(); calls++; return 7, nil }, 30*time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	if w.Latest().T == 0 {
		t.Error("no sample after several intervals")
	}
	s := w.Stop()
	if len(s) < 3 {
		t.Fatalf("%d samples, want several", len(s))
	}
	for i, x := range s {
		if x.CPUCores < 0.4 || x.CPUCores > 0.6 {
			t.Errorf("sample %d: CPUCores = %.3f, want 0.5", i, x.CPUCores)
		}
		if x.TimeWait != 7 || x.Procs != 1 || x.Threads != 3 {
			t.Errorf("sample %d = %+v", i, x)
		}
		if i > 0 && x.T <= s[i-1].T {
			t.Errorf("sample times not increasing: %v then %v", s[i-1].T, x.T)
		}
	}
	if s[len(s)-1] != w.Latest() {
		t.Error("Latest is not the last sample")
	}
	if again := w.Stop(); !slices.Equal(again, s) {
		t.Error("second Stop returned different samples")
	}
	if w.Err() != nil {
		t.Errorf("Err = %v", w.Err())
	}
	mu.Lock()
	if calls != len(s) {
		t.Errorf("TIME_WAIT counted %d times for %d samples", calls, len(s))
	}
	mu.Unlock()
}

func TestWatcherErrors(t *testing.T) {
	g := &clockGroup{start: time.Now(), fail: true}
	w := Start(g, func() (int, error) { return 0, errors.New("no ns") }, 10*time.Millisecond)
	time.Sleep(50 * time.Millisecond)
	if s := w.Stop(); len(s) != 0 {
		t.Errorf("samples from a failing group: %v", s)
	}
	if w.Err() == nil {
		t.Error("no error recorded")
	}
	// Without a group only TIME_WAIT is sampled; without a counter it is -1.
	w = Start(nil, nil, 10*time.Millisecond)
	time.Sleep(30 * time.Millisecond)
	s := w.Stop()
	if len(s) == 0 || s[0].TimeWait != -1 || s[0].MemCurrent != 0 {
		t.Errorf("samples without group and counter: %v", s)
	}
}

func TestIdleMemory(t *testing.T) {
	g := &clockGroup{start: time.Now(), mem: []uint64{50, 10, 30, 20, 40}}
	idle, err := IdleMemory(g, 10*time.Millisecond, 5, time.Millisecond)
	// need = anon + kernel = m/2 + m/10 per reading; page cache left out
	if err != nil || idle.Total != 30 || idle.Need != 18 || idle.File != 12 || !slices.Equal(idle.TotalSamples, []uint64{50, 10, 30, 20, 40}) ||
		!slices.Equal(idle.NeedSamples, []uint64{30, 6, 18, 12, 24}) {
		t.Errorf("IdleMemory = %+v, %v", idle, err)
	}
	if Median([]uint64{4, 1, 3, 2}) != 2 || Median(nil) != 0 || Median([]uint64{10, 13}) != 11 {
		t.Error("Median of even counts")
	}
	if _, err := IdleMemory(g, 0, 0, 0); err == nil {
		t.Error("0 samples accepted")
	}
	if _, err := IdleMemory(nil, 0, 1, 0); err == nil {
		t.Error("nil group accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IdleMemoryContext(ctx, g, time.Hour, 1, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// A spinning process in a real v1 group shows up as busy CPU and memory.
func TestWatchHostGroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	if v, err := cgroup.Detect(); err != nil || v != cgroup.V1 {
		t.Skip("host cgroups are not v1")
	}
	m, err := cgroup.NewManager("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Cleanup(); err != nil {
			t.Error(err)
		}
	})
	g, err := m.Create("spin", cgroup.Limits{CPUs: "1"})
	if err != nil {
		t.Fatal(err)
	}
	// Memory charges stay where they were made, so the shell execs a new
	// image (charged to the group) once it has joined.
	cmd := exec.Command("sh", "-c", `read go; exec sh -c "while :; do :; done"`)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := stdin.Write([]byte("go\n")); err != nil {
		t.Fatal(err)
	}
	w := Start(g, nil, 200*time.Millisecond)
	time.Sleep(700 * time.Millisecond)
	s := w.Stop()
	if err := w.Err(); err != nil {
		t.Fatal(err)
	}
	if len(s) < 2 {
		t.Fatalf("%d samples", len(s))
	}
	busy := 0.0
	for _, x := range s {
		busy = max(busy, x.CPUCores)
		if x.Procs != 1 || x.MemCurrent == 0 {
			t.Errorf("sample %+v: want 1 process and some memory", x)
		}
	}
	if busy <= 0 || busy > 1.2 {
		t.Errorf("max CPUCores = %.2f, want a spinning process pinned to one CPU (0 < x <= 1)", busy)
	}
	idle, err := IdleMemory(g, 0, 3, 10*time.Millisecond)
	if err != nil || len(idle.NeedSamples) != 3 || idle.Need == 0 || idle.Total < idle.Need {
		t.Errorf("IdleMemory = %+v, %v", idle, err)
	}
}
