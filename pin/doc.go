// Package pin reads the CPU topology, pins loadlab's own threads to CPUs and
// plans cpusets for the processes the lab starts.
//
// Imports: pin is at the bottom of the order (cmd -> lab -> gen -> pin): it
// imports no other loadlab package.
package pin
