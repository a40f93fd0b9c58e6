//go:build !race

package gen

// raceEnabled: the race detector slows everything down ~10x; tests skip
// their rate checks.
const raceEnabled = false
