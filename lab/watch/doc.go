// Package watch samples a lab group once a second (CPU cores busy, memory,
// processes and threads from its cgroup, TIME_WAIT sockets from its network
// namespace) and measures idle memory the way the seed benchmarks do.
package watch
