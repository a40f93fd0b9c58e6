// Package gen is loadlab's load generator: open-loop pacing from intended
// send times and HdrHistogram recording of corrected and uncorrected
// latency, for HTTP/1.1 and HTTP/2 (plain or TLS: crypto/tls, uTLS presets
// or its own lean TLS 1.3 handshake) and HTTP/3.
//
// HTTP/1.1 and HTTP/2 run one event loop per pinned CPU on raw non-blocking
// sockets, with each request serialized once. The loops drive their sockets
// with epoll or io_uring (Config.IO): the default, IOAuto, takes io_uring
// for HTTP/1.1 closed loops and paced open loops where the kernel has what
// the loops use, and epoll for HTTP/2, for an open loop at pacing tolerance
// 0 and as the fallback (chooseIO). Their steady state allocates nothing
// per request on the paths alloc_test.go covers (HTTP/1.1 closed, open and
// paced loops, targets, large bodies, TLS keep-alive; HTTP/2). HTTP/3 runs
// quic-go connections from worker goroutines and has no allocation test.
//
// Run runs one Config and returns its result.Result (package gen/result:
// the result model, its text and JSON, thresholds, and the exact merging of
// the shards of one run in a result.Merger). A caller that checks a Config before
// it runs it (the CLI) calls Config.Prepare once and runs the Prepared: the
// URL, the headers and the targets are parsed once for both. Usage errors
// (usage.go) name Config fields. See engine.go for how a run is built.
//
// Imports: gen/result, its own internal packages, pin, internal/ and certs
// among loadlab's packages; never lab, cmd, k8s or image.
package gen
