# Targets mirror CI: .ci/run calls `make test`.
GO       ?= go
BIN      := bin
PKGS     := ./...
TIMEOUT  ?= 30m

.PHONY: all build run test e2e test-faults deps unit fuzz lint vet fmt verify verify-jute verify-layers bench bench-cluster bench-storage docker clean

all: build

build:
	$(GO) build -o $(BIN)/zkraft ./cmd/zkraft
	$(GO) build -o $(BIN)/zkbench ./cmd/zkbench

# Start a standalone server on port 2181 with data in ./data.
run: build
	./$(BIN)/zkraft start --client-port 2181 --data-dir ./data --4lw-whitelist '*'

# Install what the tests drive zkraft with (Debian packages): ZooKeeper 3.8 (reference
# server and zkCli.sh), kazoo, Curator, a JDK.
deps:
	./.ci/deps

# The whole suite: formatting, vet, layering, generated code, unit, fuzz seeds, the
# real-client and differential tests, and the real programs of e2e/ in their full forms.
# About 17-19 minutes on the 2-core machine, the server package's test binary 12 of them:
# TIMEOUT, which bounds each package's binary, leaves that room to spare.
test: deps verify
	ZKRAFT_E2E=full ZKRAFT_REQUIRE_CLIENTS=1 $(GO) test -race -count=1 -timeout $(TIMEOUT) $(PKGS)
	# The race detector keeps trees on the Go heap: test the mapped arena too.
	$(GO) test -count=1 ./datatree

# Real programs against real zkraft and ZooKeeper 3.8 processes (e2e/), the full forms
# (standalone and 3 members each, longer load_gen runs), alone and verbose: each scenario
# logs a line "e2e <scenario>: ..." with its figures. `make test` runs the same.
E2E_TIMEOUT ?= 20m
e2e: deps
	ZKRAFT_E2E=full ZKRAFT_REQUIRE_CLIENTS=1 $(GO) test -count=1 -v -timeout $(E2E_TIMEOUT) ./e2e/

# Every fault scenario of server/faults_test.go on real processes, the long ones too
# (make test runs the shorter ones): about 3 minutes.
test-faults: deps
	ZKRAFT_FAULTS=full ZKRAFT_REQUIRE_CLIENTS=1 $(GO) test -count=1 -v -timeout $(TIMEOUT) -run '^TestFault' ./server/

unit:
	$(GO) test -race -timeout $(TIMEOUT) ./jute/... ./datatree/... ./session/... ./watch/... ./quorum/...

fuzz:
	$(GO) test ./jute/ -run '^$$' -fuzz FuzzDecodeRequest -fuzztime 60s
	$(GO) test ./server/sasl/ -run '^$$' -fuzz FuzzDigestResponse -fuzztime 30s
	$(GO) test ./server/sasl/ -run '^$$' -fuzz FuzzParseJAAS -fuzztime 30s
	$(GO) test ./quorum/ -run '^$$' -fuzz FuzzWireReader -fuzztime 30s

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

verify: verify-fmt vet verify-jute verify-layers

verify-fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

verify-jute:
	cd jute && $(GO) run ./internal/gen -in zookeeper.jute -out /tmp/zkraft-records_gen.go && cmp /tmp/zkraft-records_gen.go records_gen.go

verify-layers:
	./.ci/verify-layers

# zkraft vs Apache ZooKeeper 3.8, same machine, same run (the first run begins with each
# server idle for 10 s, its CPU printed); then zkraft's own allocations
# per request (server/request_bench_test.go).
bench: deps build
	./$(BIN)/zkbench --targets zkraft,zookeeper --sessions 1,16,64,256 --duration 4s --idle 10s --idle-sessions 3000
	./$(BIN)/zkbench --targets zkraft,zookeeper --sessions 1,64,256 --duration 4s --depth 8 --workloads create,set,delete,multi
	./$(BIN)/zkbench --targets zkraft,zookeeper --storage 100000,1000000
	./$(BIN)/zkbench --targets zkraft,zookeeper --snapshot-tail 100000,1000000
	$(GO) test ./server -run '^$$' -bench . -benchmem -benchtime 5000x

# Storage with large trees alone (make bench runs it after the workloads): load, RSS, the
# longest write during snapshots, snapshot size, restart after kill -9; 100k and 1M znodes.
# Then the snapshot tail: the same writers on fresh trees with snapshots and without.
bench-storage: deps build
	./$(BIN)/zkbench --targets zkraft,zookeeper --storage 100000,1000000
	./$(BIN)/zkbench --targets zkraft,zookeeper --snapshot-tail 100000,1000000

# The same with a 3-member zkraft cluster against a 3-member ZooKeeper 3.8 ensemble; the
# visibility-watch and visibility-poll rows are how long a write made through one member
# takes to show on another (they are among the default workloads, so make bench runs them
# too, on the one server). The third run is one session with one request in flight on the
# leader: the leader's own write path, without the forwarding hop. The last is the snapshot
# tail with the writers spread over the members.
bench-cluster: deps build
	./$(BIN)/zkbench --cluster 3 --targets zkraft,zookeeper --sessions 1,16,64,256 --duration 4s --idle 10s --idle-sessions 3000
	./$(BIN)/zkbench --cluster 3 --targets zkraft,zookeeper --sessions 1,64,256 --duration 4s --depth 8 --workloads create,set,delete,multi
	./$(BIN)/zkbench --cluster 3 --on-leader --targets zkraft,zookeeper --sessions 1 --depth 1 --duration 4s --workloads set,create,delete,multi,ephemeral,session
	./$(BIN)/zkbench --cluster 3 --targets zkraft,zookeeper --snapshot-tail 100000,1000000

# The image (Dockerfile): a static binary and an empty root; no base image is pulled.
IMAGE ?= zkraft:latest
docker:
	rm -rf build/docker && mkdir -p build/docker/rootfs/etc build/docker/rootfs/data build/docker/rootfs/datalog build/docker/rootfs/conf build/docker/rootfs/tmp
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o build/docker/zkraft ./cmd/zkraft
	printf 'root:x:0:0:root:/:/zkraft\nzkraft:x:1000:1000:zkraft:/data:/zkraft\n' > build/docker/rootfs/etc/passwd
	printf 'root:x:0:\nzkraft:x:1000:\n' > build/docker/rootfs/etc/group
	docker build -t $(IMAGE) -f Dockerfile build/docker

clean:
	rm -rf $(BIN) build
