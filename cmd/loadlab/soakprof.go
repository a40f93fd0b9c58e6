//go:build soakprof

package main

// Heap profiles at chosen times of a run, for scripts/soak-gen.sh only:
// built with -tags soakprof, never part of the normal binary.
//
//	LOADLAB_HEAP_PROFILE=PREFIX        write PREFIX-<elapsed>.pprof
//	LOADLAB_HEAP_PROFILE_AT=1m,10m     at these times after the process starts
//
// Each profile is taken after a runtime.GC, so it shows live memory.

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

func init() {
	prefix := os.Getenv("LOADLAB_HEAP_PROFILE")
	at := os.Getenv("LOADLAB_HEAP_PROFILE_AT")
	if prefix == "" || at == "" {
		return
	}
	var times []time.Duration
	for _, s := range strings.Split(at, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			fmt.Fprintf(os.Stderr, "LOADLAB_HEAP_PROFILE_AT: %v\n", err)
			os.Exit(2)
		}
		times = append(times, d)
	}
	start := time.Now()
	go func() {
		for _, d := range times {
			time.Sleep(time.Until(start.Add(d)))
			runtime.GC()
			name := fmt.Sprintf("%s-%s.pprof", prefix, d)
			fh, err := os.Create(name)
			if err != nil {
				fmt.Fprintf(os.Stderr, "heap profile: %v\n", err)
				continue
			}
			pprof.WriteHeapProfile(fh)
			fh.Close()
		}
	}()
}
