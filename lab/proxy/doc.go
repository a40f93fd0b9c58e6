// Package proxy defines the servers the lab measures: one Profile per
// configuration (nginx-stock, nginx-keepalive, caddy-stock, a user's
// my-nginx, ...). Every profile is a profile file (file.go): one YAML
// document that names the binary, how to read its version, the command
// that runs it in the foreground and the config templates rendered into
// its run directory with the lab's parameters (Data). The built-ins are
// profile files embedded from builtin/; a user's files load the same way
// into a Set. What stays in Go is what a file cannot say: reading a
// version from a Go binary's build info, and readiness.
//
// Starting and stopping the process (cgroups, namespaces) is the caller's
// job; this package only describes how.
//
// Imports: only lab/backend and internal/findbin among loadlab's packages;
// never lab/session, gen or cmd.
package proxy
