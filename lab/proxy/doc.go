// Package proxy defines the reverse proxies the lab measures: one Profile per
// configuration a seed benchmark used (nginx-stock, nginx-keepalive,
// caddy-stock, ...). A profile finds its binary, reports its version, renders
// its config files from an embedded template, gives the foreground command
// that runs it and checks that it is ready.
//
// Starting and stopping the process (cgroups, namespaces) is the caller's job;
// this package only describes how.
//
// Imports: only lab/backend and internal/findbin among loadlab's packages;
// never lab/session, gen or cmd.
package proxy
