package run

import (
	"runtime"
	"sync"
)

// The TCP loops of every run in the process hold a P each (raw system
// calls keep it while they sleep), so GOMAXPROCS must cover all of them
// plus one for everything else, or a run started beside another would
// leave its own loops, or the process's other goroutines (a library
// caller's servers, say), without a P. HoldPs and ReleasePs keep one
// process-wide count and restore the caller's setting when the last run ends.
var procs struct {
	sync.Mutex
	held int // loops of the runs in progress
	base int // GOMAXPROCS before the first of them
}

// HoldPs counts n more loops that hold a P.
func HoldPs(n int) {
	procs.Lock()
	defer procs.Unlock()
	if procs.held == 0 {
		procs.base = runtime.GOMAXPROCS(0)
	}
	procs.held += n
	if want := procs.held + 1; want > runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
}

// ReleasePs counts n loops that hold a P less.
func ReleasePs(n int) {
	procs.Lock()
	defer procs.Unlock()
	procs.held -= n
	want := max(procs.base, procs.held+1)
	if procs.held == 0 {
		want = procs.base
	}
	if want != runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(want)
	}
}
