// Package gen is loadlab's load generator engine: one epoll event loop per
// pinned CPU, raw non-blocking sockets, a request serialized once, open-loop
// pacing from intended send times, and HdrHistogram recording of corrected and
// uncorrected latency.
package gen
