package cleanup

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/loadlab/loadlab/internal/findbin"
	"github.com/loadlab/loadlab/internal/pidstate"
	"github.com/loadlab/loadlab/lab/proc"
)

// ReaperSubcommand is the hidden first argument that makes the loadlab
// binary run ReaperMain.
const ReaperSubcommand = "__reaper"

// reaperDone is what Reaper.Stop writes: the lab cleaned up by itself.
const reaperDone = "done\n"

// Reaper is a child process that cleans up after this one if it dies
// without running its janitor (kill -9, an OOM kill, a crash): the proxies'
// workers that outlive their master's parent-death signal, the cgroups, the
// network namespaces, bridges and veths.
type Reaper struct {
	cmd  *exec.Cmd
	mu   sync.Mutex // guards w
	w    *os.File
	done chan struct{}
}

// StartReaper starts self (a loadlab binary that dispatches
// ReaperSubcommand to ReaperMain) as this process's reaper. When this
// process dies the reaper gets SIGTERM (its parent-death signal; the stdin
// pipe closing is the backstop) and removes what this run left, as
// RemoveLeftovers does at the start of the next run: with cgroups the run
// directories of dead runs (every process in them killed: v2 cgroup.kill,
// v1 SIGKILL to every pid in cgroup.procs until empty), with netPrefix
// their namespaces, bridges and veths. It reports what it removed on
// stderr. Stop it when the run has cleaned up by itself.
func StartReaper(self string, cgroups bool, netPrefix string) (*Reaper, error) {
	// It runs as root as long as the run: the binary passes the rule of
	// every program the lab runs.
	if err := findbin.Trusted(self); err != nil {
		return nil, fmt.Errorf("reaper: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reaper: %v", err)
	}
	defer r.Close()
	args := []string{ReaperSubcommand, "--pid", strconv.Itoa(os.Getpid()), "--net-prefix", netPrefix}
	if cgroups {
		args = append(args, "--cgroups")
	}
	cmd := exec.Command(self, args...)
	cmd.Env = findbin.Environ("", nil)
	cmd.Stdin, cmd.Stderr = r, os.Stderr
	// Its own process group: a terminal's Ctrl-C goes to the run, which
	// cleans up itself, not to the reaper.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if err := proc.StartOnSpawner(cmd); err != nil {
		w.Close()
		return nil, fmt.Errorf("start the reaper %s: %v", self, err)
	}
	rp := &Reaper{cmd: cmd, w: w, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(rp.done) }()
	return rp, nil
}

// PID is the reaper's process id.
func (r *Reaper) PID() int { return r.cmd.Process.Pid }

// Track asks the reaper to SIGKILL process group pgid too if the run
// dies: for programs outside the run's cgroups (--no-cgroups), whose
// forked workers nothing else would find. Untrack it once the group is
// stopped, so that a pgid the kernel hands out again is never signalled.
func (r *Reaper) Track(pgid int) { r.send("+" + strconv.Itoa(pgid) + "\n") }

// Untrack undoes Track.
func (r *Reaper) Untrack(pgid int) { r.send("-" + strconv.Itoa(pgid) + "\n") }

// send writes one line to the reaper (atomic: shorter than PIPE_BUF).
func (r *Reaper) send(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		_, _ = io.WriteString(r.w, line)
	}
}

// Stop tells the reaper the run cleaned up by itself and waits (up to 5 s)
// for it to exit. Idempotent.
func (r *Reaper) Stop() error {
	r.mu.Lock()
	if r.w != nil {
		_, _ = io.WriteString(r.w, reaperDone)
		r.w.Close()
		r.w = nil
	}
	r.mu.Unlock()
	select {
	case <-r.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
		return fmt.Errorf("reaper pid %d did not exit within 5 s of being told to", r.PID())
	}
}

// reaperWithin bounds how long the reaper waits for the run's direct
// children to die before it removes the run's cgroups anyway (removal kills
// what is left).
const reaperWithin = 30 * time.Second

// ReaperMain is the reaper: args follow ReaperSubcommand (--pid PID of the
// run, --cgroups, --net-prefix P). It waits until the run exits: "done" on
// stdin means it cleaned up by itself; SIGTERM (the parent-death signal) or
// stdin closing without "done" means it died, and the reaper removes its
// leftovers. It returns the exit status.
func ReaperMain(args []string) int {
	fs := flag.NewFlagSet(ReaperSubcommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pid := fs.Int("pid", 0, "the run's pid")
	cgroups := fs.Bool("cgroups", false, "remove the run's cgroups")
	prefix := fs.String("net-prefix", "", "remove namespaces, bridges and veths with this prefix")
	if err := fs.Parse(args); err != nil || *pid <= 0 {
		fmt.Fprintf(os.Stderr, "loadlab %s: bad arguments %q: %v\n", ReaperSubcommand, args, err)
		return 2
	}
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	// The parent may have died before the parent-death signal was armed.
	if os.Getppid() != *pid {
		return reap(*pid, *cgroups, *prefix, nil)
	}
	// stdin carries "+PGID" / "-PGID" (Track, Untrack), then "done"; its
	// end without "done" means the run died.
	lines := make(chan string, 16)
	go func() {
		br := bufio.NewReader(os.Stdin)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimSpace(line)
		}
	}()
	groups := map[int]bool{}
	for {
		select {
		case line, ok := <-lines:
			switch {
			case !ok:
				return reap(*pid, *cgroups, *prefix, groups)
			case line == strings.TrimSpace(reaperDone):
				return 0
			case len(line) > 1 && (line[0] == '+' || line[0] == '-'):
				if n, err := strconv.Atoi(line[1:]); err == nil && n > 1 {
					if line[0] == '+' {
						groups[n] = true
					} else {
						delete(groups, n)
					}
				}
			}
		case <-term:
			if pidstate.Alive(*pid) && os.Getppid() == *pid {
				continue // not from the run's death (someone sent it by hand)
			}
			return reap(*pid, *cgroups, *prefix, groups)
		}
	}
}

// reap removes what the dead run pid left and says so: the tracked
// process groups first, then what RemoveLeftovers finds.
func reap(pid int, cgroups bool, prefix string, groups map[int]bool) int {
	deadline := time.Now().Add(reaperWithin)
	for pidstate.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // its exit is still being torn down
	}
	var killed []string
	for g := range groups {
		if err := syscall.Kill(-g, syscall.SIGKILL); err == nil {
			killed = append(killed, "process group "+strconv.Itoa(g))
		}
	}
	removed, err := RemoveLeftovers(cgroups, prefix)
	removed = append(killed, removed...)
	if len(removed) > 0 {
		fmt.Fprintf(os.Stderr, "loadlab: the run (pid %d) died; removed what it left: %s\n", pid, strings.Join(removed, ", "))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "loadlab: the run (pid %d) died; not all of what it left could be removed (run `loadlab lab cleanup`): %v\n", pid, err)
		return 1
	}
	return 0
}
