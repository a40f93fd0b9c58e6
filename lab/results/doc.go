// Package results holds what `loadlab lab run` measured, in DIR/results.json:
// the plan, the machine, the CPU layouts, every proxy started, and every
// unit (one scenario against one proxy with one key type on one layout)
// with every step: the generator's result (gen.Result's JSON, per-second
// series included), the corrected latency spectrum, the proxy's cgroup and
// TIME_WAIT samples, the backend's connection counts and the cool-down.
//
// A Store writes the file atomically after every step, so an interrupted
// run loses at most the step in flight (gen returns it partial, marked
// interrupted) and the next run of the same plan into the same directory
// resumes: finished units are kept, and a unit's recorded steps are
// replayed to the search instead of run again.
//
// Imports: gen, pin, lab/plan, lab/proc, lab/search, lab/session and
// lab/watch, for the types it records, and internal/atomicfile, to save; never lab/scenario, lab/report,
// lab/compare or cmd, which read it.
package results
