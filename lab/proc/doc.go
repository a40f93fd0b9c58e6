// Package proc starts the lab's child processes (the backend and the
// proxies; the generator runs inside loadlab's own process, gen.Run)
// inside their cgroups from the first instruction, optionally inside a
// network namespace and as an unprivileged user, and stops them with
// everything they forked.
//
// A process cannot be started inside a v1 cgroup directly, and joining a
// network namespace or dropping privileges must happen between fork and
// exec. So Start runs a wrapper, by default this very binary
// (/proc/self/exe) with the hidden subcommand "__exec", which joins the
// cgroups, enters the namespace, pins CPUs, drops privileges, sets
// no_new_privs and then execs the target in place (ExecMain), in a minimal
// environment (findbin.Environ). The wrapper reports a failure
// before exec over a pipe, so Start returns it as an error.
//
// Imports: only lab/cgroup, pin, internal/findbin (which programs run, in
// which environment) and internal/safefs (the logs it opens) among
// loadlab's packages; not gen, not cmd.
package proc
