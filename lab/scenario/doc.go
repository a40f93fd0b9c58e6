// Package scenario runs a plan: it lays out the CPU groups each scenario
// asks for (what fits on this machine), turns scenarios into units (one
// scenario against one proxy profile with one key type on one layout),
// opens a fresh lab session per unit, and drives every unit's steps through
// the generator: the max-sustainable-rate search (lab/search), fixed-rate
// runs or closed-loop runs. Every step is recorded in results.json as it
// finishes (lab/results); a second run of the same plan into the same
// directory replays the recorded steps and continues where the first
// stopped.
//
// The lab session is used through the small Session and Proxy interfaces
// (the API of package lab/session), so the runner is tested with a fake
// that receives the same session.Options.
//
// Imports: gen, certs, pin, internal/ and the lab packages below it
// (backend, cleanup, plan, proxy, results, search, session, watch); only
// cmd/loadlab imports it, and it must not import cmd, lab/report or
// lab/compare.
package scenario
