// Package lab is the lab's entry point: Run runs a plan end to end (the
// plan and its overrides, the CPU layouts, the units and their budget,
// the results store, every unit through its session, the cleanup and the
// report), Check checks each proxy profile, Cleanup removes what dead runs
// left, Rerender renders a run's report again, and ProxyRows and the plan
// listings say what can run. The CLI calls these with its parsed flags and
// maps UsageError to exit 2 and ErrInterrupted to 130; it imports no other
// lab package but lab/backend (serve) and lab/compare (compare).
//
// The lab's packages sit between the CLI and the generator (imports run cmd
// -> lab -> gen -> pin): they import gen, pin, certs, internal/ and one
// another downward (this package at the top, then lab/scenario, then
// results, session and plan, down to cgroup, netns, proc and spread), never
// cmd/loadlab, k8s or image, and none of them imports this package.
package lab
