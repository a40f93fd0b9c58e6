// Package lab starts a backend and reverse proxies under cgroup cpusets,
// drives the generator through the scenarios of a plan and writes reports.
package lab
