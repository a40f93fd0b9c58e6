package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/loadlab/loadlab/gen"
	"github.com/loadlab/loadlab/gen/result"
	"github.com/loadlab/loadlab/lab/backend"
)

// Integration tests of the generator against the built-in backend on
// loopback. Each checks numbers it can predict exactly.

func startBackend(t *testing.T) *backend.Server {
	t.Helper()
	srv, err := backend.Start(backend.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func runGenCfg(t *testing.T, cfg gen.Config) *result.Result {
	t.Helper()
	res, err := gen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGenClosedLoopCounts(t *testing.T) {
	srv := startBackend(t)
	before := srv.Stats()
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/1k", Connections: 8, Duration: time.Second})
	after := srv.Stats()
	if res.OK == 0 || res.ErrorCount() != 0 || res.Status["200"] != res.OK {
		t.Fatalf("ok %d status %v errors %v", res.OK, res.Status, res.Errors)
	}
	if res.Mode != "closed" || res.Connections != 8 {
		t.Fatalf("mode %s connections %d", res.Mode, res.Connections)
	}
	// Every completed request reached the server; at most one per
	// connection was still in flight when the run stopped counting.
	served := after.Requests - before.Requests
	if served < res.Requests || served > res.Requests+8 {
		t.Fatalf("server served %d, generator counted %d", served, res.Requests)
	}
	if got := after.Accepted - before.Accepted; got != 8+1 { // 8 connections + the start probe
		t.Fatalf("server accepted %d connections, want 9 (keep-alive)", got)
	}
	// 1024-byte bodies: bytes read are at least body bytes.
	if res.BytesRead < res.OK*1024 {
		t.Fatalf("bytes_read %d < %d bodies of 1 KiB", res.BytesRead, res.OK)
	}
	if res.Latency.P50 == 0 || res.Latency.P50 > res.Latency.P99 || res.Latency.P99 > res.Latency.Max {
		t.Fatalf("latency %+v", res.Latency)
	}
}

func TestGenOpenLoopRate(t *testing.T) {
	srv := startBackend(t)
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/1k", Connections: 10, Rate: 2000, Duration: 3 * time.Second, Warmup: time.Second})
	if res.Mode != "open" {
		t.Fatalf("mode %s", res.Mode)
	}
	// 2 s measured at 2,000/s: 4,000 requests intended in the window.
	if res.Requests < 3990 || res.Requests > 4010 {
		t.Fatalf("requests %d, want 4000 ± 10 (requests due in the measured window)", res.Requests)
	}
	if res.AchievedRate < 1900 || res.AchievedRate > 2100 {
		t.Fatalf("achieved %v req/s, want ~2000", res.AchievedRate)
	}
	if res.Generator.Dropped != 0 {
		t.Fatalf("dropped %d", res.Generator.Dropped)
	}
}

func TestGenChunkedAndClose(t *testing.T) {
	srv := startBackend(t)
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/chunked", Connections: 2, Duration: time.Second})
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("chunked: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	before := srv.Stats()
	res = runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/close", Connections: 2, Duration: time.Second})
	accepted := srv.Stats().Accepted - before.Accepted
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("close: ok %d errors %v %v", res.OK, res.Errors, res.ErrorSamples)
	}
	// Connection: close on every response: one connection per request
	// (plus the probe; requests in flight at the end may add two).
	if accepted < res.Requests || accepted > res.Requests+3 {
		t.Fatalf("Connection: close: %d connections for %d requests", accepted, res.Requests)
	}
}

func TestGenNon2xxCounted(t *testing.T) {
	srv := startBackend(t)
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/status/503", Connections: 2, Duration: time.Second})
	if res.OK != 0 || res.Status["503"] == 0 || res.ErrorCount() != 0 || res.AchievedRate != 0 {
		t.Fatalf("503s: ok %d status %v errors %v achieved %v", res.OK, res.Status, res.Errors, res.AchievedRate)
	}
	if res.Requests != res.Status["503"] {
		t.Fatalf("requests %d != 503s %d", res.Requests, res.Status["503"])
	}
}

func TestGenRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = gen.Run(context.Background(), gen.Config{URL: "http://" + addr + "/", Duration: time.Second})
	if err == nil || gen.IsUsage(err) {
		t.Fatalf("nothing listening: err %v, want a run error", err)
	}
	t.Log(err)
}

func TestGenTimeout(t *testing.T) {
	srv := startBackend(t)
	start := time.Now()
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/delay/2s", Connections: 4, Duration: time.Second, Timeout: 300 * time.Millisecond})
	if res.Errors["timeout"] == 0 || res.OK != 0 {
		t.Fatalf("timeouts %d ok %d", res.Errors["timeout"], res.OK)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("run took %v, want about duration + timeout", el)
	}
}

func TestGenVerifySHA256(t *testing.T) {
	srv := startBackend(t)
	sum := sha256.Sum256(backend.Body("/1m"))
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/1m", Connections: 2, Duration: time.Second, VerifySHA256: sum[:]})
	if res.OK == 0 || res.Errors["body_mismatch"] != 0 {
		t.Fatalf("right digest: ok %d mismatches %d", res.OK, res.Errors["body_mismatch"])
	}
	if res.ThroughputGbps <= 0 {
		t.Fatalf("throughput_gbps %v", res.ThroughputGbps)
	}
	bad := sha256.Sum256([]byte("other"))
	res = runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/1m", Connections: 2, Duration: time.Second, VerifySHA256: bad[:]})
	if res.OK != 0 || res.Errors["body_mismatch"] == 0 {
		t.Fatalf("wrong digest: ok %d mismatches %d", res.OK, res.Errors["body_mismatch"])
	}
}

// TestGenCLIJSON checks the JSON contract through the CLI.
func TestGenCLIJSON(t *testing.T) {
	srv := startBackend(t)
	out := filepath.Join(t.TempDir(), "r.json")
	hlog := filepath.Join(t.TempDir(), "r.hlog")
	if code := execute([]string{"gen", "-q", "-c", "4", "-d", "2s", "-r", "500", "--json", out, "--hdr-log", hlog, "http://" + srv.Addr() + "/1k"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"target", "mode", "connections", "duration_s", "requested_rate", "achieved_rate", "requests", "ok", "status", "errors", "bytes_read", "latency_us", "latency_uncorrected_us", "per_second", "generator"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, k := range []string{"p50", "p90", "p95", "p99", "p999", "max", "mean"} {
		if _, ok := m["latency_us"].(map[string]any)[k]; !ok {
			t.Errorf("latency_us lacks %q", k)
		}
	}
	g := m["generator"].(map[string]any)
	for _, k := range []string{"cpus", "loops", "busy", "lag_p99_us", "lag_max_us", "late_sends", "bottleneck", "reason"} {
		if _, ok := g[k]; !ok {
			t.Errorf("generator lacks %q", k)
		}
	}
	// The library's notes name Config fields ({IO}); the CLI's name its flags.
	if note, _ := g["io_note"].(string); !strings.Contains(note, "--io auto") || strings.Contains(note, "{") {
		t.Errorf("generator.io_note %q: want it to name the --io flag", note)
	}
	ps := m["per_second"].([]any)
	if len(ps) < 2 {
		t.Fatalf("per_second has %d entries", len(ps))
	}
	for _, k := range []string{"t", "ok", "non2xx", "errors", "p99_us"} {
		if _, ok := ps[0].(map[string]any)[k]; !ok {
			t.Errorf("per_second lacks %q", k)
		}
	}
	// The interval log must be readable by the standard HdrHistogram reader.
	fh, err := os.Open(hlog)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rd := hdr.NewHistogramLogReader(fh)
	var intervals, count int64
	for {
		h, err := rd.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("hdr log: %v", err)
		}
		if h == nil {
			break
		}
		intervals++
		count += h.TotalCount()
	}
	if intervals < 2 || count < 500 {
		t.Fatalf("hdr log: %d intervals, %d values", intervals, count)
	}
}

func TestGenSrcAddrsMustBeLocal(t *testing.T) {
	srv := startBackend(t)
	_, err := gen.Run(context.Background(), gen.Config{URL: "http://" + srv.Addr() + "/1k", Duration: time.Second,
		SrcAddrs: "192.0.2.1"})
	if !gen.IsUsage(err) {
		t.Fatalf("a --src-addrs address this host lacks: err %v, want a usage error before the run", err)
	}
	res := runGenCfg(t, gen.Config{URL: "http://" + srv.Addr() + "/1k", Duration: time.Second, NewConn: true, Connections: 4,
		SrcAddrs: "127.0.0.2,127.0.0.3"})
	if res.OK == 0 || res.ErrorCount() != 0 {
		t.Fatalf("loopback source addresses: ok %d errors %v", res.OK, res.Errors)
	}
}

// TestGenRefusesRemoteTargets: an address that is not on this machine is
// refused before any packet is sent.
func TestGenRefusesRemoteTargets(t *testing.T) {
	// 198.51.100.0/24 (TEST-NET-2) is never an address of this host: the
	// check refuses it before anything is sent.
	_, err := gen.Run(context.Background(), gen.Config{URL: "http://198.51.100.10:8080/", Duration: time.Second})
	if !gen.IsUsage(err) {
		t.Fatalf("remote target: err %v, want a usage error", err)
	}
	t.Log(err)
	srv := startBackend(t)
	if _, err := gen.Run(context.Background(), gen.Config{URL: "http://" + srv.Addr() + "/1k", Duration: 200 * time.Millisecond}); err != nil {
		t.Fatalf("loopback target refused: %v", err)
	}
}
