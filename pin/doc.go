// Package pin reads the CPU topology, pins loadlab's own threads to CPUs and
// plans cpusets for the processes the lab starts.
package pin
