package main

import (
	"time"

	"github.com/spf13/pflag"
)

// serveFlags are `lab run`'s live page flags (lab.RunOptions.Serve,
// ServeLinger, AllowRemote).
type serveFlags struct {
	serve       string
	serveLinger time.Duration
	allowRemote bool
}

// defaultServeLinger keeps the final report up for two of the page's
// 5-second reloads, so an open browser shows it before the server goes.
const defaultServeLinger = 10 * time.Second

func (f *serveFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.serve, "serve", "", "serve the live report at http://HOST:PORT/ while the run goes: the report so far, rebuilt after each step, with the step running and the ETA on top; it reloads itself every 5 s (loopback only unless --allow-remote)")
	fl.DurationVar(&f.serveLinger, "serve-linger", defaultServeLinger, "after the run, keep serving the final report this long, so an open page shows it (0: exit at once; Ctrl-C ends it early)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a --serve address off loopback, reachable from other machines (metrics: --metrics-allow-remote)")
}
