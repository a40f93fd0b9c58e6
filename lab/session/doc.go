// Package session is one lab session on this machine: the backend child
// process, the certificates, the CPU plan, the control groups and (with Net
// "netns") the network namespaces, and the proxies started one after another
// against that backend.
//
// Every child (the backend, each proxy) starts inside its own fresh cgroup
// through lab/proc's wrapper (cpuset = its CPU group, a memory limit for
// proxies), in its own network namespace in netns mode, and proxies run as an
// unprivileged user where the proxy supports that. Open registers every undo
// step with a cleanup.Janitor, so Close (also reached from a signal handler
// through Options.Janitor) stops children by PID and removes the cgroups and
// namespaces on every exit path.
//
// Checks the seeds relied on live here too: bodies fetched through a proxy
// are byte-identical to the backend's (HTTPS with each key type, h2, and
// HTTP/3 where the profile serves it), idle memory as seed 001 measured it,
// a restart timed until the proxy answers again with the same certificate,
// and known causes counted in the proxy's error log.
//
// Imports: gen, certs, pin, internal/fields, internal/safefs and the lab
// packages it runs
// (backend, cgroup, cleanup, netns, proc, proxy, watch); never lab/scenario,
// lab/results, lab/report or cmd.
package session
