package pin

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime returns the user plus system CPU time the calling OS thread
// has used (getrusage RUSAGE_THREAD). It is only meaningful on a goroutine
// locked to its thread (see PinThread). It does not allocate on success.
func ThreadCPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, fmt.Errorf("getrusage(RUSAGE_THREAD): %w", err)
	}
	return tvDuration(ru.Utime) + tvDuration(ru.Stime), nil
}

// tvDuration converts a Timeval to a Duration.
func tvDuration(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}

// ProcessCPUTime returns the user plus system CPU time of the whole process,
// every thread included (getrusage RUSAGE_SELF). It does not allocate on
// success.
func ProcessCPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage(RUSAGE_SELF): %w", err)
	}
	return tvDuration(ru.Utime) + tvDuration(ru.Stime), nil
}
