package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// config is everything one run needs; flags fill it, tests build it directly.
type config struct {
	targets   []string      // names of servers to start: zkraft, zookeeper
	addr      string        // an external server instead of targets
	pid       int           // the external server's pid, for RSS (0: unknown)
	cluster   int           // members per target (0: one standalone server)
	storage   []int         // tree sizes for the storage measurements (storage.go) instead of the workloads
	snapTail  []int         // tree sizes for the snapshot tail (snaptail.go) instead of the workloads
	zkraftBin string        // zkraft binary to start; "" lets ztest build ./cmd/zkraft
	sessions  []int         // session counts, one cell per count
	duration  time.Duration // timed part of one cell
	warmup    time.Duration // untimed mixed load per target before the first cell, then a quarter of it per workload
	workloads []string
	valueSize int
	depth     int  // requests in flight per session
	onLeader  bool // with cluster: every session on the leader instead of spread over the members
	jsonPath  string
	idle      time.Duration // measure each target's CPU while idle for this long first (0: no)
	// idleSessions: then measure the RSS each of this many idle sessions adds (0: no).
	idleSessions int
	logf         func(format string, args ...any)
}

func defaultConfig() config {
	return config{
		targets:   []string{"zkraft", "zookeeper"},
		sessions:  []int{1, 16, 64},
		duration:  5 * time.Second,
		warmup:    2 * time.Second,
		workloads: workloadNames(),
		valueSize: 100,
		depth:     4,
		logf:      log.New(os.Stderr, "zkbench: ", log.Ltime).Printf,
	}
}

// validate names the flag that is wrong.
func (c *config) validate() error {
	switch {
	case c.addr == "" && len(c.targets) == 0:
		return errors.New("--targets: empty (or give --addr)")
	case c.cluster != 0 && c.cluster != 3 && c.cluster != 5:
		return errors.New("--cluster: must be 0, 3 or 5")
	case len(c.storage) > 0 && (c.addr != "" || c.cluster != 0):
		return errors.New("--storage: starts its own standalone servers (not with --addr or --cluster)")
	case len(c.snapTail) > 0 && (c.addr != "" || len(c.storage) > 0 || c.onLeader):
		return errors.New("--snapshot-tail: starts its own servers (not with --addr, --storage or --on-leader)")
	case c.onLeader && c.cluster == 0:
		return errors.New("--on-leader: only with --cluster")
	case c.cluster != 0 && c.addr != "":
		return errors.New("--cluster: not with --addr (give the members comma-separated in --addr)")
	case len(c.sessions) == 0:
		return errors.New("--sessions: empty")
	case c.duration <= 0:
		return errors.New("--duration: must be positive")
	case c.idle < 0:
		return errors.New("--idle: must not be negative")
	case c.idleSessions < 0:
		return errors.New("--idle-sessions: must not be negative")
	case c.warmup < 0:
		return errors.New("--warmup: must not be negative")
	case c.valueSize < 0 || c.valueSize > 512*1024:
		return errors.New("--value-size: must be in [0, 524288]")
	case c.depth < 1 || c.depth > 256:
		return errors.New("--depth: must be in [1, 256]")
	}
	for _, s := range c.sessions {
		if s < 1 || s > 1000 {
			return fmt.Errorf("--sessions: %d not in [1, 1000]", s)
		}
	}
	for _, t := range c.targets {
		if t != "zkraft" && t != "zookeeper" {
			return fmt.Errorf("--targets: unknown target %q (zkraft, zookeeper)", t)
		}
	}
	for _, w := range c.workloads {
		if workloadByName(w) == nil {
			return fmt.Errorf("--workloads: unknown workload %q (%s)", w, strings.Join(workloadNames(), ","))
		}
	}
	return nil
}

func main() {
	cfg := defaultConfig()
	if err := parseFlags(&cfg, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "zkbench:", err)
		os.Exit(2)
	}
	os.Exit(run(cfg, os.Stdout))
}

func parseFlags(cfg *config, args []string) error {
	fs := flag.NewFlagSet("zkbench", flag.ContinueOnError)
	targets := fs.String("targets", strings.Join(cfg.targets, ","), "servers to start and compare: zkraft,zookeeper")
	fs.StringVar(&cfg.addr, "addr", "", "benchmark an already running server at host:port instead of --targets")
	fs.IntVar(&cfg.pid, "pid", 0, "with --addr: the server's pid, to report its RSS")
	fs.IntVar(&cfg.cluster, "cluster", 0, "start each target as a cluster of this many members (3 or 5; 0: standalone); sessions spread over the members")
	fs.BoolVar(&cfg.onLeader, "on-leader", false, "with --cluster: put every session on the leader (the leader's own write path; the default spreads them, as real clients land)")
	fs.StringVar(&cfg.zkraftBin, "zkraft-binary", siblingBinary("zkraft"), "zkraft binary to benchmark (empty: build ./cmd/zkraft)")
	sessions := fs.String("sessions", joinInts(cfg.sessions), "session counts, comma separated; one measurement per count")
	fs.DurationVar(&cfg.duration, "duration", cfg.duration, "timed duration of each workload x sessions cell")
	fs.DurationVar(&cfg.warmup, "warmup", cfg.warmup, "untimed mixed load on each server before measuring (JIT, caches), then each workload for a quarter of it")
	workloads := fs.String("workloads", strings.Join(cfg.workloads, ","), "workloads, comma separated: "+strings.Join(workloadNames(), ","))
	fs.IntVar(&cfg.valueSize, "value-size", cfg.valueSize, "bytes of data per znode written")
	fs.IntVar(&cfg.depth, "depth", cfg.depth, "requests in flight per session (goroutines sharing one connection)")
	fs.StringVar(&cfg.jsonPath, "json", "", "also write the results as JSON to this file")
	fs.DurationVar(&cfg.idle, "idle", 0, "first let the servers sit idle this long and print the CPU each used")
	fs.IntVar(&cfg.idleSessions, "idle-sessions", 0, "first open this many sessions on each server, let them sit idle, and print the RSS each added")
	storage := fs.String("storage", "", "instead of the workloads, measure load, RSS, heap per znode, write stall during snapshots, snapshot size, restart, the mixed tail with GC pauses and watch memory with trees of these sizes (e.g. 100000,1000000)")
	snapTail := fs.String("snapshot-tail", "", "instead of the workloads, compare the write latency with and without snapshots of the whole tree, on fresh trees of these sizes (e.g. 100000,1000000)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg.targets = splitList(*targets)
	cfg.workloads = splitList(*workloads)
	var err error
	if cfg.sessions, err = parseInts(*sessions); err != nil {
		return fmt.Errorf("--sessions: %w", err)
	}
	if cfg.storage, err = parseInts(*storage); err != nil {
		return fmt.Errorf("--storage: %w", err)
	}
	if cfg.snapTail, err = parseInts(*snapTail); err != nil {
		return fmt.Errorf("--snapshot-tail: %w", err)
	}
	if *quiet {
		cfg.logf = func(string, ...any) {}
	}
	return cfg.validate()
}

// run starts the servers, measures, prints, stops the servers. The exit code is 1 if a
// target could not be started or measured, so `make bench` does not pass silently.
func run(cfg config, out io.Writer) int {
	if len(cfg.storage) > 0 {
		return runStorage(cfg, out)
	}
	if len(cfg.snapTail) > 0 {
		return runSnapshotTail(cfg, out)
	}
	targets, startErrs := startTargets(cfg)
	defer stopTargets(cfg, targets)
	for _, err := range startErrs {
		cfg.logf("%v", err)
	}
	if len(targets) == 0 {
		fmt.Fprintln(out, "zkbench: no server to measure")
		return 1
	}
	if cfg.idle > 0 {
		measureIdle(cfg, targets, cfg.idle, out)
	}
	if cfg.idleSessions > 0 {
		measureIdleSessions(cfg, targets, cfg.idleSessions, out)
	}
	rep := runBench(cfg, targets)
	rep.writeTable(out)
	for _, err := range startErrs {
		fmt.Fprintf(out, "NOT MEASURED: %v\n", err)
	}
	if cfg.jsonPath != "" {
		if err := rep.writeJSONFile(cfg.jsonPath); err != nil {
			fmt.Fprintln(os.Stderr, "zkbench:", err)
			return 1
		}
	}
	if len(startErrs) > 0 || rep.failed() {
		return 1
	}
	return 0
}

// siblingBinary returns the path of name next to this executable if there is one there,
// as `make build` leaves bin/zkraft beside bin/zkbench, and "" otherwise.
func siblingBinary(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
