package proc

import (
	"fmt"
	"github.com/loadlab/loadlab/internal/testutil"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary plays both parts: the wrapper (first argument
// ExecSubcommand, as cmd/loadlab dispatches it) and the programs the tests
// start (LOADLAB_TEST_HELPER selects what they do).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ExecSubcommand {
		err := ExecMain(os.Args[2:])
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		os.Exit(127)
	}
	if mode := os.Getenv("LOADLAB_TEST_HELPER"); mode != "" {
		helperMain(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperMain runs one helper program; each prints a line when ready.
func helperMain(mode string) {
	switch mode {
	case "sleep":
		fmt.Println("ready")
		time.Sleep(60 * time.Second)
	case "ignoreterm":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(60 * time.Second)
	case "alloc":
		// 50 MiB, every page touched so it is charged.
		b := make([]byte, 50<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		fmt.Println("ready")
		time.Sleep(60 * time.Second)
		b[0]++ // keep b alive
	case "fork":
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), "LOADLAB_TEST_HELPER=sleep")
		if err := c.Start(); err != nil {
			fmt.Println("fork failed:", err)
			os.Exit(1)
		}
		fmt.Println("child", c.Process.Pid)
		_ = c.Wait()
	case "listen":
		ln, err := net.Listen("tcp", os.Getenv("LISTEN"))
		if err != nil {
			fmt.Println("listen failed:", err)
			os.Exit(1)
		}
		fmt.Println("ready")
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "uid=%d\n", os.Getuid())
			c.Close()
		}
	case "starter":
		// Starts a program through the wrapper, prints its pid and
		// waits to be killed (Pdeathsig test).
		p, err := Start(Spec{Path: "sleep", Args: []string{"60"}, User: os.Getenv("AS_USER")})
		if err != nil {
			fmt.Println("start failed:", err)
			os.Exit(1)
		}
		fmt.Println("child", p.PID())
		time.Sleep(60 * time.Second)
	default:
		fmt.Println("unknown helper", mode)
		os.Exit(2)
	}
}

// helperEnv returns the environment that makes the test binary run mode.
func helperEnv(mode string, extra ...string) []string {
	return append(append(os.Environ(), "LOADLAB_TEST_HELPER="+mode), extra...)
}

// pidFromLine parses the number after "child ".
func pidFromLine(t *testing.T, line string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(line, "child "))
	if err != nil {
		t.Fatalf("bad line %q", line)
	}
	return n
}

// startT starts s and stops it when the test ends.
func startT(t *testing.T, s Spec) *Process {
	t.Helper()
	p, err := Start(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(time.Second) })
	return p
}

// waitLine waits up to 10 s for the log file to hold a line starting with
// prefix and returns that line.
func waitLine(t *testing.T, path, prefix string) string {
	t.Helper()
	return testutil.WaitFileLine(t, path, prefix, 10*time.Second)
}

// waitGone fails unless pid disappears within 5 s.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testutil.WaitGone(t, pid, 5*time.Second)
}

// statusField is a field of /proc/PID/status.
func statusField(t *testing.T, pid int, key string) string {
	t.Helper()
	return testutil.ProcStatus(t, pid, key)
}
