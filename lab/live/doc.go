// Package live is `lab run --serve`: the lab report served over HTTP while
// the run goes. Page is a scenario.Observer: after each step it rebuilds the
// report from results.json's data (report.Build, the final report's own
// renderer; a unit still running shows the steps it has recorded) and
// caches its HTML; as each step starts it puts what runs now
// and the ETA at the top (report.Live); the page reloads itself with a
// meta refresh, no script. Server serves the cached page on a listener
// bound before the run starts (loopback unless --allow-remote).
//
// Imports: gen, internal/, lab/report, lab/results and lab/scenario (for
// the Observer it implements); package lab wires it into Run, and nothing
// below lab imports it.
package live
