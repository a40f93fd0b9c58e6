package proc

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/loadlab/loadlab/pin"
	"golang.org/x/sys/unix"
)

// helloByte is the first byte the wrapper writes to its report pipe; a
// binary that does not dispatch ExecSubcommand never writes it.
const helloByte = 'W'

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// wrapperArgs are the wrapper's parsed arguments.
type wrapperArgs struct {
	procs  listFlag
	netns  string
	cpus   string
	uid    int
	gid    int
	groups string
	ppid   int
	errfd  int
	argv   []string // target path, then its arguments
}

// parseWrapperArgs parses the wrapper's flags. On error the flags read so
// far (--errfd comes first) are still returned, so the error can be reported.
func parseWrapperArgs(args []string) (*wrapperArgs, error) {
	w := &wrapperArgs{uid: -1, gid: -1, errfd: -1}
	fs := flag.NewFlagSet(ExecSubcommand, flag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.Var(&w.procs, "procs", "cgroup.procs file to join (repeatable)")
	fs.StringVar(&w.netns, "netns", "", "network namespace file to enter")
	fs.StringVar(&w.cpus, "cpus", "", "CPU affinity list")
	fs.IntVar(&w.uid, "uid", -1, "user id to switch to")
	fs.IntVar(&w.gid, "gid", -1, "group id to switch to")
	fs.StringVar(&w.groups, "groups", "", "supplementary group ids, comma separated")
	fs.IntVar(&w.ppid, "ppid", 0, "expected parent pid (exit if it is gone)")
	fs.IntVar(&w.errfd, "errfd", -1, "file descriptor to report failures on")
	if err := fs.Parse(args); err != nil {
		return w, fmt.Errorf("%s: %v", ExecSubcommand, err)
	}
	w.argv = fs.Args()
	if len(w.argv) == 0 || w.argv[0] == "" {
		return w, fmt.Errorf("%s: no program to run (want: %s [flags] -- PATH ARGS...)", ExecSubcommand, ExecSubcommand)
	}
	if (w.uid < 0) != (w.gid < 0) {
		return w, fmt.Errorf("%s: --uid and --gid go together", ExecSubcommand)
	}
	return w, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// ExecMain is the wrapper: args are what follows ExecSubcommand on the
// command line. It joins the cgroups (--procs FILE, repeatable), enters the
// network namespace (--netns PATH), sets CPU affinity (--cpus LIST), drops
// to --uid/--gid/--groups, re-arms the parent-death signal, sets
// no_new_privs, then replaces itself with the program after "--" (its
// environment is the wrapper's: Start's minimal one). It returns only on failure, after
// writing the reason to --errfd (Start's pipe). Call it first thing in the
// hidden subcommand, before other goroutines do work.
func ExecMain(args []string) error {
	// Namespace and affinity are per thread: do everything, exec included,
	// on this one.
	runtime.LockOSThread()
	w, err := parseWrapperArgs(args)
	var report *os.File
	if w.errfd >= 0 {
		syscall.CloseOnExec(w.errfd) // closes by itself once exec succeeds
		report = os.NewFile(uintptr(w.errfd), "report")
		_, _ = report.Write([]byte{helloByte})
	}
	if err == nil {
		err = w.run()
	}
	if report != nil {
		_, _ = report.WriteString(err.Error())
		report.Close()
	}
	return err
}

// run performs the steps before exec, in an order that keeps each possible:
// cgroups and setns need root, so privileges go last.
func (w *wrapperArgs) run() error {
	pid := strconv.Itoa(os.Getpid())
	for _, f := range w.procs {
		if err := writeFile(f, pid); err != nil {
			return fmt.Errorf("cannot join cgroup %s: %v", strings.TrimSuffix(f, "/cgroup.procs"), err)
		}
	}
	if w.netns != "" {
		fd, err := unix.Open(w.netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot open network namespace %s: %v", w.netns, err)
		}
		err = unix.Setns(fd, unix.CLONE_NEWNET)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("cannot enter network namespace %s: %v", w.netns, err)
		}
	}
	if w.cpus != "" {
		cpus, err := pin.ParseList(w.cpus)
		if err != nil {
			return err
		}
		var set unix.CPUSet
		for _, c := range cpus {
			set.Set(c)
		}
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("cannot pin to CPUs %s: %v", w.cpus, err)
		}
	}
	if w.uid >= 0 {
		if err := dropPrivileges(w.uid, w.gid, w.groups); err != nil {
			return err
		}
	}
	// Pdeathsig is cleared when credentials change; set it again, then
	// make sure the parent did not die before it took effect.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set parent-death signal: %v", err)
	}
	if w.ppid != 0 && os.Getppid() != w.ppid {
		return errors.New("parent exited before the program started")
	}
	// No exec from here on gains privileges (setuid bits, file
	// capabilities): a proxy's master that stays root, or a worker that
	// switched to the proxy user, cannot get them back through a program
	// it runs.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set no_new_privs: %v", err)
	}
	err := syscall.Exec(w.argv[0], w.argv, os.Environ())
	return fmt.Errorf("cannot execute %s: %v", w.argv[0], err)
}

// dropPrivileges switches to uid/gid with the given supplementary groups.
func dropPrivileges(uid, gid int, groups string) error {
	var gs []int
	for _, g := range strings.Split(groups, ",") {
		if g == "" {
			continue
		}
		n, err := strconv.Atoi(g)
		if err != nil {
			return fmt.Errorf("bad group id %q", g)
		}
		gs = append(gs, n)
	}
	if err := syscall.Setgroups(gs); err != nil {
		return fmt.Errorf("cannot set groups of uid %d: %v", uid, err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("cannot switch to gid %d: %v", gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("cannot switch to uid %d: %v", uid, err)
	}
	return nil
}

// writeFile writes s into an existing file (a cgroup control file).
func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
