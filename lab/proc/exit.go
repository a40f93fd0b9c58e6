package proc

import (
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Exit is how a program ended: its exit status or the signal that killed
// it, and when the lab saw it (the supervisor's wait returned).
type Exit struct {
	At     time.Time
	Code   int            // exit status; -1 when a signal killed it
	Signal syscall.Signal // the signal that killed it; 0 when it exited
}

// Describe says how the program ended: "killed by SIGKILL", "exited with
// status 1".
func (x Exit) Describe() string {
	if x.Signal != 0 {
		return "killed by " + SignalName(x.Signal)
	}
	if x.Code == 0 {
		return "exited with status 0"
	}
	return "exited with status " + strconv.Itoa(x.Code)
}

// SignalName is the signal's name, e.g. "SIGKILL" ("signal 42" for one
// without a name).
func SignalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}

// exitOf reads a wait status.
func exitOf(st *os.ProcessState, at time.Time) Exit {
	x := Exit{At: at, Code: -1}
	if st == nil {
		return x
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		x.Signal = ws.Signal()
		return x
	}
	x.Code = st.ExitCode()
	return x
}
