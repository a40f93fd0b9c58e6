// Package cleanup undoes what a lab run made, on every exit path: a Janitor
// runs registered undo steps (stop processes, remove cgroups, close network
// namespaces) in reverse order, and RemoveLeftovers clears what an earlier
// run left when it was killed before its janitor could run.
package cleanup
