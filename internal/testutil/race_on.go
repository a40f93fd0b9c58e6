//go:build race

package testutil

// Race reports a build with the race detector, which slows everything
// down about tenfold and makes allocation counts meaningless: tests skip
// their rate checks and AllocsPerRun checks under it.
const Race = true
