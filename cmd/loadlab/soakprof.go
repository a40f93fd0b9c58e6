//go:build soakprof

package main

// Memory probes for scripts/soak-gen.sh only: built with -tags soakprof,
// never part of the normal binary.
//
//	LOADLAB_HEAP_PROFILE=PREFIX        write PREFIX-<elapsed>.pprof
//	LOADLAB_HEAP_PROFILE_AT=1m,10m     at these times after the process starts
//	LOADLAB_HEAP_LOG=FILE              every minute: seconds, live heap after a
//	                                   GC (HeapAlloc), HeapSys, Sys, in bytes
//
// Every allocation is profiled (MemProfileRate 1): the generator allocates
// nothing per request, so that costs nothing measurable, and a profile then
// shows live memory exactly instead of one sample per 512 KiB. Each profile
// and log line is taken after a runtime.GC, so it shows live memory.

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

func init() {
	prefix, at, logFile := os.Getenv("LOADLAB_HEAP_PROFILE"), os.Getenv("LOADLAB_HEAP_PROFILE_AT"), os.Getenv("LOADLAB_HEAP_LOG")
	if (prefix == "" || at == "") && logFile == "" {
		return
	}
	runtime.MemProfileRate = 1
	start := time.Now()
	if prefix != "" && at != "" {
		var times []time.Duration
		for _, s := range strings.Split(at, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintf(os.Stderr, "LOADLAB_HEAP_PROFILE_AT: %v\n", err)
				os.Exit(2)
			}
			times = append(times, d)
		}
		go func() {
			for _, d := range times {
				time.Sleep(time.Until(start.Add(d)))
				runtime.GC()
				fh, err := os.Create(fmt.Sprintf("%s-%s.pprof", prefix, d))
				if err != nil {
					fmt.Fprintf(os.Stderr, "heap profile: %v\n", err)
					continue
				}
				pprof.WriteHeapProfile(fh)
				fh.Close()
			}
		}()
	}
	if logFile != "" {
		go func() {
			for t := time.Minute; ; t += time.Minute {
				time.Sleep(time.Until(start.Add(t)))
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
				if err != nil {
					return
				}
				fmt.Fprintf(f, "%d\t%d\t%d\t%d\n", int(t.Seconds()), m.HeapAlloc, m.HeapSys, m.Sys)
				f.Close()
			}
		}()
	}
}
