package pin

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// What a thread's CPU was doing besides running it.
//
// A thread's own CPU time (ThreadCPUTime) cannot see the time it spent
// runnable but waiting for its CPU (another task ran there), nor the time
// the CPU spent on softirqs (network receive processing, accounted apart
// when the kernel has IRQ time accounting) or lost to the hypervisor
// (steal). The generator reports those as "starved": time its loop could
// not run although it wanted to, or that its CPU could not give anyone.

// ErrNoSchedStat is returned where the kernel does not expose
// /proc/<tid>/schedstat (CONFIG_SCHED_INFO off).
var ErrNoSchedStat = errors.New("the kernel does not expose schedstat")

// userHZ is the unit of /proc/stat's CPU times. Linux reports them in
// USER_HZ, which is 100 on every architecture Go supports.
const userHZ = 100

// SchedStat is a thread's scheduler account (from /proc/<tid>/schedstat).
type SchedStat struct {
	Run  time.Duration // time on a CPU
	Wait time.Duration // time runnable, waiting on a run queue
}

// ThreadSchedStat returns the calling thread's scheduler account. It is only
// meaningful on a goroutine locked to its thread; it does not allocate.
func ThreadSchedStat() (SchedStat, error) {
	return readSchedStat("/proc/thread-self/schedstat")
}

// TaskSchedStat returns the scheduler account of thread tid of this process.
func TaskSchedStat(tid int) (SchedStat, error) {
	return readSchedStat("/proc/self/task/" + strconv.Itoa(tid) + "/schedstat")
}

func readSchedStat(path string) (SchedStat, error) {
	var buf [128]byte
	n, err := readSmall(path, buf[:])
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return SchedStat{}, ErrNoSchedStat
		}
		return SchedStat{}, err
	}
	return parseSchedStat(buf[:n])
}

// parseSchedStat reads "run_ns wait_ns timeslices\n".
func parseSchedStat(b []byte) (SchedStat, error) {
	run, rest, ok1 := nextUint(b)
	wait, _, ok2 := nextUint(rest)
	if !ok1 || !ok2 {
		return SchedStat{}, fmt.Errorf("schedstat: malformed line %q", b)
	}
	return SchedStat{Run: time.Duration(run), Wait: time.Duration(wait)}, nil
}

// CPUTimes is part of one CPU's line of /proc/stat.
type CPUTimes struct {
	Busy    time.Duration // user + nice + system + irq (+ guest, which user includes)
	Idle    time.Duration // idle + iowait
	IOWait  time.Duration // the part of Idle spent waiting for I/O
	SoftIRQ time.Duration
	Steal   time.Duration
}

// StatReader reads per-CPU times from /proc/stat into a buffer it owns, so
// repeated reads do not allocate. Not safe for concurrent use.
type StatReader struct{ buf []byte }

// NewStatReader returns a reader with a buffer for this machine's /proc/stat
// CPU lines.
func NewStatReader() *StatReader { return &StatReader{buf: make([]byte, 64<<10)} }

// Read returns the times of the given CPU.
func (s *StatReader) Read(cpu int) (CPUTimes, error) {
	n, err := readSmall("/proc/stat", s.buf)
	if err != nil {
		return CPUTimes{}, err
	}
	return parseProcStat(s.buf[:n], cpu)
}

// ReadAll fills dst[i] with the times of cpus[i].
func (s *StatReader) ReadAll(cpus CPUSet, dst []CPUTimes) error {
	n, err := readSmall("/proc/stat", s.buf)
	if err != nil {
		return err
	}
	for i, c := range cpus {
		if dst[i], err = parseProcStat(s.buf[:n], c); err != nil {
			return err
		}
	}
	return nil
}

// parseProcStat finds the line "cpuN user nice system idle iowait irq
// softirq steal ..." of cpu N.
func parseProcStat(b []byte, cpu int) (CPUTimes, error) {
	for len(b) > 0 {
		line := b
		rest := []byte(nil)
		for i, c := range b {
			if c == '\n' {
				line, rest = b[:i], b[i+1:]
				break
			}
		}
		b = rest
		if len(line) < 4 || string(line[:3]) != "cpu" || line[3] < '0' || line[3] > '9' {
			continue
		}
		id, fields, ok := nextUint(line[3:])
		if !ok || int(id) != cpu {
			continue
		}
		var v [8]uint64
		for i := range v {
			if v[i], fields, ok = nextUint(fields); !ok {
				if i < 4 {
					return CPUTimes{}, fmt.Errorf("/proc/stat: short line for cpu%d", cpu)
				}
				break
			}
		}
		tick := func(x uint64) time.Duration { return time.Duration(x) * time.Second / userHZ }
		return CPUTimes{
			Busy:    tick(v[0] + v[1] + v[2] + v[5]),
			Idle:    tick(v[3] + v[4]),
			IOWait:  tick(v[4]),
			SoftIRQ: tick(v[6]),
			Steal:   tick(v[7]),
		}, nil
	}
	return CPUTimes{}, fmt.Errorf("/proc/stat has no line for cpu%d", cpu)
}

// nextUint skips spaces and parses one decimal number.
func nextUint(b []byte) (uint64, []byte, bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	start := i
	var v uint64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + uint64(b[i]-'0')
		i++
	}
	return v, b[i:], i > start
}

// readSmall reads a proc file into buf with raw system calls (no
// allocation, no os.File).
func readSmall(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n, nil
}

// Task is one thread of this process as a sampler sees it.
type Task struct {
	TID   int
	CPU   int // the CPU it last ran on
	Sched SchedStat
}

// Tasks lists the threads of this process with the CPU each last ran on
// and its scheduler account. Threads that exit while being read are
// skipped. It allocates; call it off hot paths.
func Tasks(dst []Task) ([]Task, error) {
	dst = dst[:0]
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return dst, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return dst, err
	}
	var buf [1024]byte
	for _, name := range names {
		tid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		st, err := TaskSchedStat(tid)
		if err != nil {
			continue
		}
		n, err := readSmall("/proc/self/task/"+name+"/stat", buf[:])
		if err != nil {
			continue
		}
		cpu, ok := statProcessor(buf[:n])
		if !ok {
			continue
		}
		dst = append(dst, Task{TID: tid, CPU: cpu, Sched: st})
	}
	return dst, nil
}

// statProcessor returns field 39 (processor) of a /proc/<tid>/stat line.
// The command name (field 2) may hold spaces and parentheses: fields are
// counted from the last ')'.
func statProcessor(b []byte) (int, bool) {
	end := -1
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			end = i
			break
		}
	}
	if end < 0 {
		return 0, false
	}
	// After ") " comes field 3 (state); processor is field 39.
	field := 2
	for i := end + 1; i < len(b); i++ {
		if b[i] != ' ' {
			continue
		}
		field++
		if field == 39 {
			v, _, ok := nextUint(b[i+1:])
			return int(v), ok
		}
	}
	return 0, false
}
