package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// skipOrFail skips when the reference server is missing, unless CI asked for it
// (ZKRAFT_REQUIRE_CLIENTS=1, as `make test` sets).
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("ZKRAFT_REQUIRE_CLIENTS") == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// shortRun is the config of a short run of workloads against one target: no warmup,
// 400 ms per cell, progress to the test's log.
func shortRun(t *testing.T, target string, cluster int, workloads []string, sessions ...int) config {
	t.Helper()
	cfg := defaultConfig()
	cfg.targets = []string{target}
	cfg.cluster = cluster
	cfg.workloads = workloads
	cfg.sessions = sessions
	cfg.duration = 400 * time.Millisecond
	cfg.warmup = 0
	cfg.logf = t.Logf
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSmokeZooKeeper runs one short workload against a real ZooKeeper and checks that
// it measured something and that the table has its columns.
func TestSmokeZooKeeper(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		skipOrFail(t, "java not found: ZooKeeper cannot run here")
	}
	cfg := shortRun(t, "zookeeper", 0, []string{"get"}, 1)
	targets, errs := startTargets(cfg)
	defer stopTargets(cfg, targets)
	if len(errs) > 0 || len(targets) == 0 {
		skipOrFail(t, "ZooKeeper did not start: %v", errs)
	}
	rep := runBench(cfg, targets)
	res := rep.find("zookeeper", "get", 1)
	if res == nil {
		t.Fatal("no result for get, 1 session")
	}
	if res.Error != "" || res.Ops == 0 || res.OpsPerSec <= 0 {
		t.Fatalf("result: %+v", *res)
	}
	if res.P50Ms <= 0 || res.P50Ms > res.P99Ms || res.P99Ms > res.P999Ms {
		t.Errorf("latencies out of order: %+v", *res)
	}
	if res.RSSBytes <= 0 {
		t.Errorf("no RSS for the ZooKeeper process")
	}
	if res.CPUMsPer1k <= 0 {
		t.Errorf("no CPU time for the ZooKeeper process")
	}
	var buf bytes.Buffer
	rep.writeTable(&buf)
	t.Log("\n" + buf.String())
	checkTable(t, buf.String(), []string{"zookeeper"}, false)
	if !rowFor(buf.String(), "get", "1") {
		t.Errorf("no row for get, 1 session")
	}
}

// TestTableTwoTargets checks the side-by-side layout and the ratios without servers.
func TestTableTwoTargets(t *testing.T) {
	cfg := defaultConfig()
	cfg.workloads = []string{"get", "lock"}
	cfg.sessions = []int{1, 16}
	rep := &report{cfg: cfg, started: time.Now(), targets: []string{"zkraft", "zookeeper"}}
	for _, w := range cfg.workloads {
		for _, s := range cfg.sessions {
			rep.results = append(rep.results,
				result{Target: "zkraft", Workload: w, Sessions: s, Ops: 100, OpsPerSec: 2000, P50Ms: 0.5, P99Ms: 1, P999Ms: 2, RSSBytes: 50 << 20},
				result{Target: "zookeeper", Workload: w, Sessions: s, Ops: 100, OpsPerSec: 1000, P50Ms: 1, P99Ms: 2, P999Ms: 4, RSSBytes: 200 << 20})
		}
	}
	rep.results[len(rep.results)-1].Error = "boom"
	var buf bytes.Buffer
	rep.writeTable(&buf)
	out := buf.String()
	checkTable(t, out, []string{"zkraft", "zookeeper"}, true)
	for _, want := range []string{"2.00x", "0.50x", "0.25x", "n/a", "FAILED: boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !rowFor(out, "lock", "16") {
		t.Errorf("no row for lock, 16 sessions:\n%s", out)
	}

	path := filepath.Join(t.TempDir(), "out.json")
	if err := rep.writeJSONFile(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got jsonReport
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 8 || len(got.Ratios) != 4 {
		t.Fatalf("json: %d results, %d ratios", len(got.Results), len(got.Ratios))
	}
	if r := got.Ratios[0]; r.OpsPerSec == nil || *r.OpsPerSec != 2 || r.RSS == nil || *r.RSS != 0.25 {
		t.Errorf("json ratios[0] = %+v", r)
	}
	if r := got.Ratios[3]; r.OpsPerSec != nil {
		t.Errorf("json ratio of a failed cell = %v, want null", *r.OpsPerSec)
	}
}

func checkTable(t *testing.T, out string, targets []string, ratio bool) {
	t.Helper()
	lines := strings.Split(out, "\n")
	var groups, names []string
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "workload" && f[1] == "sessions" {
			names = f
			groups = strings.Fields(lines[i-1])
			break
		}
	}
	if names == nil {
		t.Fatalf("no header line:\n%s", out)
	}
	// "p50 ms" is two fields once split.
	wantGroups := []string{"ops/s", "p50", "ms", "p99", "ms", "p99.9", "ms", "RSS", "MiB", "CPU/1k", "ms"}
	if !slices.Equal(groups, wantGroups) {
		t.Errorf("metric groups %q, want %q", groups, wantGroups)
	}
	per := slices.Clone(targets)
	if ratio {
		per = append(per, "ratio")
	}
	want := []string{"workload", "sessions"}
	for range len(metrics) {
		want = append(want, per...)
	}
	if !slices.Equal(names, want) {
		t.Errorf("columns %q, want %q", names, want)
	}
}

func rowFor(out, workload, sessions string) bool {
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == workload && f[1] == sessions {
			return true
		}
	}
	return false
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	var samples []time.Duration
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		d := time.Duration(r.ExpFloat64() * float64(300*time.Microsecond))
		samples = append(samples, d)
		h.record(d)
	}
	slices.Sort(samples)
	for _, q := range []float64{0.5, 0.99, 0.999} {
		exact := samples[int(q*float64(len(samples)))-1]
		got := h.quantile(q)
		if got < exact || float64(got-exact) > 0.02*float64(exact)+1 {
			t.Errorf("q%v = %v, exact %v", q, got, exact)
		}
	}
	// over(d) counts every sample above d and at most the ones of d's bucket besides.
	for _, d := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 3 * time.Millisecond, time.Hour} {
		above, _ := slices.BinarySearch(samples, d+1)
		inBucket := 0 // the first sample in d's bucket or above
		if b := bucketOf(uint64(d)); b > 0 {
			inBucket, _ = slices.BinarySearch(samples, time.Duration(bucketHigh(b-1))+1)
		}
		lo, hi := uint64(len(samples)-above), uint64(len(samples)-inBucket)
		if got := h.over(d); got < lo || got > hi {
			t.Errorf("over(%v) = %d, want within [%d, %d]", d, got, lo, hi)
		}
	}
	for _, ns := range []uint64{0, 1, 63, 64, 65, 127, 128, 1000, 1 << 20, 1<<40 - 1} {
		i := bucketOf(ns)
		if hi := bucketHigh(i); hi < ns || (i > 0 && bucketHigh(i-1) >= ns) {
			t.Errorf("value %d: bucket %d covers up to %d, previous up to %d", ns, i, hi, bucketHigh(i-1))
		}
	}
}

func TestFlags(t *testing.T) {
	cfg := defaultConfig()
	if err := parseFlags(&cfg, []string{"--sessions", "2,8", "--workloads", "get,lock", "--duration", "1s"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.sessions, []int{2, 8}) || !slices.Equal(cfg.workloads, []string{"get", "lock"}) || cfg.duration != time.Second {
		t.Errorf("parsed %+v", cfg)
	}
	cfg = defaultConfig()
	if err := parseFlags(&cfg, []string{"--cluster", "3", "--on-leader"}); err != nil || !cfg.onLeader {
		t.Errorf("--cluster 3 --on-leader: %v, onLeader %v", err, cfg.onLeader)
	}
	cfg = defaultConfig()
	if err := parseFlags(&cfg, []string{"--snapshot-tail", "1000,2000"}); err != nil || !slices.Equal(cfg.snapTail, []int{1000, 2000}) {
		t.Errorf("--snapshot-tail 1000,2000: %v, %v", err, cfg.snapTail)
	}
	cfg = defaultConfig()
	if err := parseFlags(&cfg, []string{"--snapshot-tail", "1000", "--cluster", "3"}); err != nil || cfg.cluster != 3 {
		t.Errorf("--snapshot-tail 1000 --cluster 3: %v, cluster %d", err, cfg.cluster)
	}
	for _, bad := range [][]string{{"--workloads", "nope"}, {"--targets", "etcd"}, {"--sessions", "0"}, {"--depth", "0"}, {"--on-leader"},
		{"--snapshot-tail", "1000", "--cluster", "3", "--on-leader"}, {"--idle-sessions", "-1"}, {"--snapshot-tail", "1000", "--storage", "1000"}, {"--snapshot-tail", "x"}} {
		cfg := defaultConfig()
		if err := parseFlags(&cfg, bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestVisibility runs both visibility workloads against a real zkraft, standalone (both
// sessions of a pair on the one server) and as a 3-member cluster (writer and reader on
// different members), and checks that writes were seen and the lags are sane.
func TestVisibility(t *testing.T) {
	for _, members := range []int{0, 3} {
		t.Run(fmt.Sprintf("cluster=%d", members), func(t *testing.T) {
			cfg := shortRun(t, "zkraft", members, []string{"visibility-watch", "visibility-poll"}, 1, 3)
			targets, errs := startTargets(cfg)
			defer stopTargets(cfg, targets)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if c := targets[0].cluster; c != nil {
				if got, want := byRole(targets[0].members), c.Members[c.Leader()].Addr; got[len(got)-1] != want {
					t.Errorf("byRole = %v, want the leader %s last", got, want)
				}
			}
			rep := runBench(cfg, targets)
			var buf bytes.Buffer
			rep.writeTable(&buf)
			t.Log("\n" + buf.String())
			for _, res := range rep.results {
				if res.Error != "" || res.Ops == 0 || res.Errors > 0 {
					t.Errorf("%s, %d sessions: %+v", res.Workload, res.Sessions, res)
					continue
				}
				if res.P50Ms < 0 || res.P50Ms > res.P99Ms || res.P99Ms > res.P999Ms || res.P999Ms > res.MaxMs || res.MaxMs <= 0 || res.MaxMs > 5000 {
					t.Errorf("%s, %d sessions: lags out of order or range: %+v", res.Workload, res.Sessions, res)
				}
				// A poll's lag includes at least the read's round trip.
				if res.Workload == "visibility-poll" && res.P50Ms <= 0 {
					t.Errorf("%s, %d sessions: p50 %v ms", res.Workload, res.Sessions, res.P50Ms)
				}
			}
		})
	}
}

// maxStaleShare bounds the share of first reads on the reader's member that miss the
// write the writer's member already answered for, under load (16 pairs, several writes
// in flight at once). Before a member's reads waited for what another may have applied
// (quorum/fresh_read.go) the share was 11-20% on the 2-core machine, and 0-2% after;
// ZooKeeper 3.8's ensemble measured 5-19% in the same runs.
const maxStaleShare = 0.05

// A write answered through one member is seen by the first read on another, under load:
// a 3-member zkraft cluster, visibility-poll with 16 pairs. A share above the bound is
// measured up to twice more on the same cluster before the test fails (the rest of the
// suite loads the machine unevenly, and a stalled machine can hold a read past the 2 ms
// it waits); the build before measured above twice the bound every time.
func TestFirstReadsOnAnotherMemberAreFresh(t *testing.T) {
	cfg := shortRun(t, "zkraft", 3, []string{"visibility-poll"}, 16)
	cfg.duration = 2 * time.Second
	targets, errs := startTargets(cfg)
	defer stopTargets(cfg, targets)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	var shares []float64
	for try := 0; try < 3; try++ {
		rep := runBench(cfg, targets)
		if len(rep.results) != 1 || rep.results[0].Error != "" || rep.results[0].Ops == 0 {
			t.Fatalf("visibility-poll did not run: %+v", rep.results)
		}
		res := rep.results[0]
		share := float64(res.Marked) / float64(res.Ops)
		t.Logf("stale first reads: %d of %d (%.1f%%)", res.Marked, res.Ops, 100*share)
		if share <= maxStaleShare {
			return
		}
		shares = append(shares, share)
	}
	t.Errorf("stale first reads on another member: %.1f%%, %.1f%% and %.1f%% of ops, more than %.0f%%", 100*shares[0], 100*shares[1], 100*shares[2], 100*maxStaleShare)
}

func TestPlacePairs(t *testing.T) {
	for _, members := range []int{1, 3, 5} {
		at := placePairs(7, members)
		writes := map[int]bool{}
		for i := range 7 {
			w, r := at[i], at[7+i]
			writes[w] = true
			if members > 1 && w == r {
				t.Errorf("%d members: pair %d writes and reads on member %d", members, i, w)
			}
		}
		if len(writes) != members {
			t.Errorf("%d members: writers on %d of them", members, len(writes))
		}
	}
}
