// Package cleanup undoes what a lab run made, on every exit path: a Janitor
// runs registered undo steps (stop processes, remove cgroups, close network
// namespaces) in reverse order, and RemoveLeftovers clears what an earlier
// run left when it was killed before its janitor could run.
//
// Imports: lab/cgroup, lab/netns and lab/proc (what it undoes) and
// internal/pidstate and internal/findbin; never lab/session or the packages above it, gen or cmd.
package cleanup
