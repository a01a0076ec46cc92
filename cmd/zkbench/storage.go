package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// The storage measurements (--storage N,...): for each tree size N, each target is
// started fresh, filled with N znodes of --value-size bytes (multis of 100 creates, 8
// sessions), and measured:
//
//   - load: how long the fill took (ops/s of znodes created);
//   - RSS with the tree (after the fill and 2 s of rest);
//   - write stall: 8 sessions set random nodes for storageWindow while the servers take
//     snapshots of the whole tree (snapCount=20000 on both, so several fall in the window):
//     the longest and the p99.9 set latency;
//   - snapshot size: the newest snapshot file on disk 5 s after the window;
//   - restart: SIGKILL, then the time from starting the process again until it serves and
//     a read of the last node written answers;
//   - quiet tail: after the restart, with snapCount raised past anything written, the
//     same writers for storageQuiet: the p99 set latency without snapshots. The longest
//     write of the snapshot window over it is the snapshot stall ("max/quiet p99").
const (
	storageWindow   = 15 * time.Second
	storageSessions = 8
	storageFanout   = 1000 // children per dir
	storageSnap     = "20000"
	storageNoSnap   = "1000000000"
	storageQuiet    = 10 * time.Second
)

type storageResult struct {
	Target      string  `json:"target"`
	Znodes      int     `json:"znodes"`
	LoadSeconds float64 `json:"load_seconds"`
	RSSBytes    int64   `json:"rss_bytes"`
	MaxStallMs  float64 `json:"max_write_ms"`
	P999Ms      float64 `json:"p999_write_ms"`
	Writes      uint64  `json:"writes"`
	SnapBytes   int64   `json:"snapshot_bytes"`
	RestartSec  float64 `json:"restart_seconds"`
	QuietP99Ms  float64 `json:"quiet_p99_write_ms"`
	QuietMaxMs  float64 `json:"quiet_max_write_ms"`
	Error       string  `json:"error,omitempty"`
}

func runStorage(cfg config, out io.Writer) int {
	var results []storageResult
	failed := false
	for _, n := range cfg.storage {
		for _, name := range cfg.targets {
			cfg.logf("storage: %s with %d znodes", name, n)
			r := measureStorage(cfg, name, n)
			if r.Error != "" {
				failed = true
				cfg.logf("storage: %s with %d znodes: %s", name, n, r.Error)
			}
			results = append(results, r)
		}
	}
	writeStorageTable(out, cfg, results)
	if failed {
		return 1
	}
	return 0
}

func measureStorage(cfg config, name string, n int) (r storageResult) {
	r = storageResult{Target: name, Znodes: n}
	opts := ztest.Options{ExtraConfig: map[string]string{"maxClientCnxns": "0", "snapCount": storageSnap},
		Logf: cfg.logf, JavaHeap: "4g"}
	var srv *ztest.Server
	var err error
	if name == "zkraft" {
		opts.Binary = cfg.zkraftBin
		srv, err = ztest.StartZkraft(opts)
	} else {
		srv, err = ztest.StartZooKeeper(opts)
	}
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer srv.Stop()
	conns, err := connectAll([]string{srv.Addr}, roundRobin(storageSessions, 1))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer func() { closeAll(conns) }()
	value := make([]byte, cfg.valueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	// Fill: the dirs first, then the nodes, in multis spread over the sessions.
	start := time.Now()
	dirs := (n + storageFanout - 1) / storageFanout
	if _, err := conns[0].Create("/s", nil, 0, worldACL); err != nil {
		r.Error = "fill: " + err.Error()
		return r
	}
	var ops []any
	for d := 0; d < dirs; d++ {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/s/d%05d", d), Acl: worldACL})
	}
	if err := bulk(conns[:1], ops); err != nil {
		r.Error = "fill: " + err.Error()
		return r
	}
	ops = ops[:0]
	paths := make([]string, 0, n)
	for i := 0; i < n; i++ {
		p := fmt.Sprintf("/s/d%05d/n%04d", i/storageFanout, i%storageFanout)
		paths = append(paths, p)
		ops = append(ops, &zk.CreateRequest{Path: p, Data: value, Acl: worldACL})
	}
	if err := bulk(conns, ops); err != nil {
		r.Error = "fill: " + err.Error()
		return r
	}
	r.LoadSeconds = time.Since(start).Seconds()
	time.Sleep(2 * time.Second)
	r.RSSBytes = rss(srv.Cmd.Process.Pid)

	// Writes while snapshots of the whole tree are taken.
	hist, writes, err := writeWindow(conns, paths, value, storageWindow)
	if err != nil {
		r.Error = "writes: " + err.Error()
		return r
	}
	r.MaxStallMs = float64(hist.max) / float64(time.Millisecond)
	r.P999Ms = float64(hist.quantile(0.999)) / float64(time.Millisecond)
	r.Writes = writes
	time.Sleep(5 * time.Second) // a snapshot being written when the window closed finishes
	r.SnapBytes = newestSnapshotSize(name, srv.DataDir)

	// Restart after a crash, with snapshots off from then on (snapCount past anything
	// the quiet window writes).
	last := paths[len(paths)-1]
	closeAll(conns)
	conns = nil
	srv.Kill()
	if err := srv.SetConfig("snapCount", storageNoSnap); err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	start = time.Now()
	if err := srv.Restart(true); err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	c, err := connect(srv.Addr)
	if err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	defer c.Close()
	if _, _, err := c.Get(last); err != nil {
		r.Error = "restart: read " + last + ": " + err.Error()
		return r
	}
	r.RestartSec = time.Since(start).Seconds()

	// The same writes on the same tree without snapshots: the tail to hold the snapshot
	// window's against.
	if conns, err = connectAll([]string{srv.Addr}, roundRobin(storageSessions, 1)); err != nil {
		r.Error = "quiet: " + err.Error()
		return r
	}
	quiet, _, err := writeWindow(conns, paths, value, storageQuiet)
	if err != nil {
		r.Error = "quiet writes: " + err.Error()
		return r
	}
	r.QuietP99Ms = float64(quiet.quantile(0.99)) / float64(time.Millisecond)
	r.QuietMaxMs = float64(quiet.max) / float64(time.Millisecond)
	return r
}

// writeWindow has every session set pseudo-random nodes, one in flight each, for d.
func writeWindow(conns []*zk.Conn, paths []string, value []byte, d time.Duration) (histogram, uint64, error) {
	var hist histogram
	var mu sync.Mutex
	var writes atomic.Uint64
	var werr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h histogram
			k := i
			for time.Now().Before(deadline) {
				k = (k*7919 + 13) % len(paths)
				t0 := time.Now()
				if _, err := c.Set(paths[k], value, -1); err != nil {
					werr.Store(err)
					return
				}
				h.record(time.Since(t0))
				writes.Add(1)
			}
			mu.Lock()
			hist.merge(&h)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if e, ok := werr.Load().(error); ok {
		return hist, 0, e
	}
	return hist, writes.Load(), nil
}

// newestSnapshotSize is the size of the newest snapshot file: zkraft's state.bin, or
// ZooKeeper's version-2/snapshot.*.
func newestSnapshotSize(name, dataDir string) int64 {
	pattern := filepath.Join(dataDir, "zkraft", "snapshots", "*", "state.bin")
	if name != "zkraft" {
		pattern = filepath.Join(dataDir, "version-2", "snapshot.*")
	}
	files, _ := filepath.Glob(pattern)
	type f struct {
		mod  time.Time
		size int64
	}
	var fs []f
	for _, p := range files {
		if fi, err := os.Stat(p); err == nil {
			fs = append(fs, f{fi.ModTime(), fi.Size()})
		}
	}
	if len(fs) == 0 {
		return 0
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].mod.After(fs[j].mod) })
	return fs[0].size
}

func writeStorageTable(out io.Writer, cfg config, rs []storageResult) {
	fmt.Fprintf(out, "zkbench storage: %s, values of %d bytes, snapCount %s, %d writers for %v\n\n",
		time.Now().Format("2006-01-02 15:04:05"), cfg.valueSize, storageSnap, storageSessions, storageWindow)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "znodes\ttarget\tload s\tRSS MiB\tmax write ms\tp99.9 write ms\twrites\tsnapshot MiB\trestart s\tquiet p99 ms\tquiet max ms\tmax/quiet p99\t")
	for _, r := range rs {
		if r.Error != "" {
			fmt.Fprintf(tw, "%d\t%s\tFAILED: %s\t\t\t\t\t\t\t\t\t\t\n", r.Znodes, r.Target, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%d\t%.1f\t%.1f\t%d\t%.1f\t%.2f\t%.2f\t%.1f\t%.1f\t\n", r.Znodes, r.Target, r.LoadSeconds,
			r.RSSBytes>>20, r.MaxStallMs, r.P999Ms, r.Writes, float64(r.SnapBytes)/(1<<20), r.RestartSec,
			r.QuietP99Ms, r.QuietMaxMs, ratio(r.MaxStallMs, r.QuietP99Ms))
	}
	tw.Flush()
	// Ratios zkraft/zookeeper per size.
	fmt.Fprintln(out, "\nratio zkraft/zookeeper (below 1 is better, except writes):")
	for _, n := range cfg.storage {
		var a, b *storageResult
		for i := range rs {
			if rs[i].Znodes == n && rs[i].Error == "" {
				if rs[i].Target == "zkraft" {
					a = &rs[i]
				} else {
					b = &rs[i]
				}
			}
		}
		if a == nil || b == nil {
			continue
		}
		q := func(x, y float64) string {
			if y == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2fx", x/y)
		}
		fmt.Fprintf(out, "  %d znodes: RSS %s, max write %s (max/quiet p99 %.1f vs %.1f), p99.9 write %s, writes %s, snapshot %s, restart %s\n", n,
			q(float64(a.RSSBytes), float64(b.RSSBytes)), q(a.MaxStallMs, b.MaxStallMs), ratio(a.MaxStallMs, a.QuietP99Ms), ratio(b.MaxStallMs, b.QuietP99Ms), q(a.P999Ms, b.P999Ms),
			q(float64(a.Writes), float64(b.Writes)), q(float64(a.SnapBytes), float64(b.SnapBytes)), q(a.RestartSec, b.RestartSec))
	}
}

// ratio is x/y, or 0 where y is 0.
func ratio(x, y float64) float64 {
	if y == 0 {
		return 0
	}
	return x / y
}
