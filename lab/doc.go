// Package lab starts a backend and reverse proxies under cgroup cpusets,
// drives the generator through the scenarios of a plan and writes reports.
//
// The lab's packages sit between the CLI and the generator (imports run cmd
// -> lab -> gen -> pin): they import gen, pin, certs, internal/ and one
// another downward (lab/scenario at the top, then results, session and plan,
// down to cgroup, netns, proc and spread), never cmd/loadlab, k8s or image.
package lab
