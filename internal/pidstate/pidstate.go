// Package pidstate tells whether a process id still names a live process,
// for the code that removes what dead lab runs left.
//
// Imports: a leaf of internal/ (helpers loadlab's packages share); it
// imports no other loadlab package.
package pidstate

import (
	"bytes"
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid names a process that exists and is not a
// zombie. A zombie (dead, its parent has not waited for it yet) holds no
// resources: a lab run killed with SIGKILL is one until its shell reaps
// it, and its leftovers may go at once. EPERM counts as alive (the process
// exists, owned by someone else).
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// "pid (comm) state ...": comm may hold ')'.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}
