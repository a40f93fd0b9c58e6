// Package result is the generator's result model: what a run measured
// (Result, its latency percentiles, per-second series, the generator's
// account of itself and its verdict words), its text and JSON forms, the
// thresholds checked on it, and the exact merging of the shards of one run
// (Merger, ReadResults, ReadHdrLog). Tally.Add is the one sum of a
// result's counts: gen adds its loops' tallies into a run's result with it,
// and Merger adds the shards'.
//
// It is data, not the engine: the lab's results, reports and compare read
// it without importing gen. It imports internal/fields and internal/units
// among loadlab's packages, and never gen, lab or cmd.
package result
