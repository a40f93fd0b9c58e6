// Package gen is loadlab's load generator: one epoll event loop per pinned
// CPU on raw non-blocking sockets, a request serialized once, open-loop
// pacing from intended send times, and HdrHistogram recording of corrected
// and uncorrected latency, for HTTP/1.1 and HTTP/2 (plain or TLS: crypto/tls,
// uTLS presets or its own lean TLS 1.3 handshake) and HTTP/3 (quic-go).
// Run runs one Config and returns its Result; the Results of the shards of
// one run add up exactly in a Merger. See engine.go for how a run is built.
package gen
