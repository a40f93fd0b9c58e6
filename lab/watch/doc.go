// Package watch samples a lab group once a second (CPU cores busy, memory,
// processes and threads from its cgroup, TIME_WAIT sockets from its network
// namespace) and measures idle memory the way the seed benchmarks do.
//
// Imports: only lab/cgroup, lab/proc and internal/fields among loadlab's
// packages; never lab/session or the packages above it, gen or cmd.
package watch
