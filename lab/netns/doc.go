// Package netns builds the lab's private network: one Linux network
// namespace per role (backend, proxy, gen), each joined by a veth pair to a
// bridge, with addresses that exist only inside the namespaces. Sysctls in
// the namespaces stay at the kernel defaults (ephemeral ports 32768-60999,
// tcp_tw_reuse for loopback only), so port exhaustion happens as it does on
// a fresh host or container. It also counts TIME_WAIT sockets per namespace.
//
// Every name carries a prefix and the creator's pid (namespace
// "ll<pid>-<n>-<role>", bridge "llbr<pid>-<n>", veth "ll<pid>-<n>v<i>"), so
// parallel runs do not collide and RemoveStale can find what a crashed run
// left behind.
//
// Imports: only internal/pidstate and internal/sockdiag among loadlab's
// packages; no other lab package, not gen, not cmd.
package netns
