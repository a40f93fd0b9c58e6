# loadlab: `make lab` runs the main job on a built-in default, `make test`
# runs the tests. Both install what they need (apt-get, go install).

GO      ?= go
BIN     := bin/loadlab
OUT     ?= results/quick
PLAN    ?= quick
FUZZTIME ?= 1

IMAGE   ?= loadlab:dev

.PHONY: all build deps deps-lab test test-prep test-go test-beside test-rest test-cmd-beside test-gen-beside fuzz lint lab image k8s-up k8s-e2e k8s-down bench bench-gen bench-handshake bench-h3 bench-h2 clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/loadlab

# Proxies, peers and tools the tests and the lab use (idempotent).
deps:
	scripts/install-proxies.sh

# Only what make lab's default plan runs (nginx, haproxy, iproute2, caddy).
deps-lab:
	scripts/install-proxies.sh --lab

test:
	$(MAKE) -j2 --output-sync=target deps test-prep
	$(MAKE) test-go

# Beside deps (on a fresh machine mostly downloads): go vet, which compiles
# every dependency into Go's build cache, and golangci-lint's build (2-4
# minutes on a fresh machine). Not the test binaries: go test links them
# again anyway (17 s here).
test-prep:
	$(GO) vet ./...
	$(GOLANGCI_LINT) version

# The generator's measurement tests (gen/ and its run core, whose start-time
# and wake-floor tests measure too) and the CLI's end-to-end runs
# (cmd/loadlab) check latencies and verdicts against derived bounds: each
# runs with the machine to itself. Then the rest side by side (test-beside):
# the other packages (lab/session the longest), the CLI's and the
# generator's tests that judge answers and not times (CMD_BESIDE,
# GEN_BESIDE), and the fuzzers and the linter at nice 19, which take only
# the CPU time the tests leave idle (those tests mostly wait on servers,
# browsers and scrapes). lab/session's sessions sweep dead runs' cgroups
# and namespaces: the tests beside it that plant such leftovers use names
# of their own.
#
# The gen tests run on epoll, then the measurement-truth,
# coordinated-omission, misbehaving-server and allocation tests run again on
# io_uring (--io auto picks io_uring for HTTP/1.1 where the kernel has it):
# every such test runs on both paths, and make test stays within 15 minutes.
IO_TESTS = ZeroAlloc|H2PingFlood|LoopPanic|StopAnswering|FixedCapacity|HeadRequests|TrailingBytes|KeepAliveClose|RetryIsOnce|HlogMatches|Verdict|WithoutPwait2|PacingTolerance|MisbehavingServers|NeverAnswers|DripCompletes|OpenLoopOverload|H2PacingTolerance
# The HTTP/3 measurement tests run on the lean QUIC client (what auto
# picks) with the rest of gen's, then again on quic-go's client.
H3_TESTS = TestH3(ClosedLoop|OpenLoopCorrection|VerdictSaturatedServer|ServerClosesIdle|Interrupt)$$
# The CLI's tests whose assertions are about lifecycle and answers, not a
# rate or a latency: a proxy or backend killed mid-step, SIGINT and resume,
# bad profile files, an OOM kill, lab check's SIGINT, the metrics
# Prometheus scraped compared with the run's own result, and what TLS each
# key type negotiated and counted. The kill -9 and lab cleanup tests stay
# alone: lab/session's sweep of dead runs would take what they leave and
# check for; so do the lab runs whose rows need a rate search to confirm
# and the live page, which must catch a 5 s step in Chromium (beside the
# rest, TestLabRunH3BesideH1's HTTP/1.1 search and TestLabApacheLighttpd's
# lighttpd search each failed to confirm once, and the page missed its
# step once).
CMD_BESIDE = ^(TestLab(RunProxyKilledMidStep|RunSIGINTRecordsAndResumes|BadProfiles|RunBackendKilledMidStep|RunProxyOOMKilled|CheckSIGINTCleansUp|RunMetricsInPrometheus)|TestGen(MetricsInPrometheus|TLSPerKeyType))$$
# The generator's interop with real servers: every body verified, runs of
# under a second with a 5 s timeout.
GEN_BESIDE = ^Test(LeanInterop|H2Interop)$$
test-go:
	$(GO) test -count=1 -timeout 8m ./gen/internal/run
	LOADLAB_TEST_IO=epoll $(GO) test -count=1 -timeout 8m -skip '$(GEN_BESIDE)' ./gen
	LOADLAB_TEST_IO=uring $(GO) test -count=1 -timeout 8m -run '$(IO_TESTS)' -skip 'H3' ./gen
	LOADLAB_TEST_H3ENGINE=std $(GO) test -count=1 -timeout 8m -run '$(H3_TESTS)' ./gen
	$(GO) test -count=1 -timeout 12m -skip '$(CMD_BESIDE)' ./cmd/loadlab
	$(MAKE) test-beside

test-beside:
	$(MAKE) -j5 --output-sync=target LOW='nice -n 19' test-rest test-cmd-beside test-gen-beside fuzz lint

test-rest:
	$(GO) test -count=1 -timeout 8m ./lab/session $$($(GO) list ./... | grep -v -x -e github.com/loadlab/loadlab/gen -e github.com/loadlab/loadlab/gen/internal/run -e github.com/loadlab/loadlab/cmd/loadlab -e github.com/loadlab/loadlab/lab/session)

test-cmd-beside:
	$(GO) test -count=1 -timeout 8m -run '$(CMD_BESIDE)' ./cmd/loadlab

test-gen-beside:
	$(GO) test -count=1 -timeout 8m -run '$(GEN_BESIDE)' ./gen

# make test's pass: 1 s per target (33 targets; about 80 s alone with one
# instrumented build per package; in make test at nice 19 beside the
# tests that judge answers); the seed corpora also run as plain tests in
# test-go. A longer search: make fuzz FUZZTIME=60.
fuzz:
	$(LOW) scripts/fuzz.sh $(FUZZTIME)

# golangci-lint (.golangci.yml) at a fixed version through go run: nothing
# to install. On a fresh machine its first build takes 2-4 minutes (make
# test builds it beside deps); make test runs it at nice 19 after the
# timing-sensitive tests, so it never shares the CPUs with a measurement.
GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint:
	$(LOW) $(GOLANGCI_LINT) run ./...

# Prints the budget, progress on stderr and the Markdown tables on stdout;
# writes $(OUT)/results.json, report.md, report.html. Running it again
# resumes an unfinished run (or just re-renders a finished one): remove
# $(OUT) to start over. Re-render only: bin/loadlab report $(OUT).
# deps (apt, Caddy's go install) and the build run side by side: on a
# fresh machine their downloads overlap.
lab:
	$(MAKE) -j2 --output-sync=target $(if $(filter quick,$(PLAN)),deps-lab,deps) build
	$(BIN) lab run --plan $(PLAN) --out $(OUT)

# The container image the Kubernetes Job runs (loadlab k8s job): a static
# binary (CGO off) on an empty base, written offline as bin/loadlab-image.tar
# (an OCI layout that is also a docker-archive). No container engine is
# used; load or push the archive with skopeo, docker/podman load, kind load
# image-archive or ctr import.
image:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/loadlab-static ./cmd/loadlab
	bin/loadlab-static k8s image -o bin/loadlab-image.tar --tag $(IMAGE)

# A one-node Kubernetes cluster on this machine (etcd, the control plane,
# containerd and a kubelet as processes, built from Debian's packages and
# the Go module proxy into .cache/k8s; the first build takes about 45 minutes on 2 cores),
# the sharded-run flow checked on it, and its removal. Root only; not part
# of make test. See docs/sharded.md.
k8s-up:
	scripts/k8s-up.sh

k8s-e2e:
	scripts/k8s-e2e.sh

k8s-down:
	scripts/k8s-down.sh

bench: bench-gen bench-handshake bench-h3 bench-h2

bench-gen: build
	scripts/bench-gen.sh

bench-handshake: build
	scripts/bench-handshake.sh

bench-h3: build
	scripts/bench-h3.sh

bench-h2: build
	scripts/bench-h2.sh

clean:
	rm -rf bin
