package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// The storage measurements (--storage N,...): for each tree size N, each target is
// started fresh and measured:
//
//   - empty heap: the live heap of the empty server after a full collection (zkraft:
//     go_heap_live_bytes + tree_offheap_bytes after POST /debug/gc; ZooKeeper: jcmd
//     GC.run, then GC.heap_info's used bytes);
//   - load: filled with N znodes of --value-size bytes (multis of 100 creates, 8
//     sessions), how long the fill took;
//   - RSS with the tree (after the fill and 2 s of rest), and the live heap again: heap
//     bytes per znode beyond its data = (filled - empty - N x value size) / N. The paths
//     count as overhead, not data: how a server keeps them is its own layout;
//   - write stall: 8 sessions set random nodes for storageWindow while the servers take
//     snapshots of the whole tree (snapCount=20000 on both, so several fall in the window):
//     the longest and the p99.9 set latency;
//   - snapshot size: the newest snapshot file on disk 5 s after the window;
//   - restart: SIGKILL, then the time from starting the process again until it serves and
//     a read of the last node written answers;
//   - full read: getData of every znode (8 sessions); the RSS after it;
//   - quiet tail: with snapCount raised past anything written, the same writers for
//     storageQuiet: the p99 set latency without snapshots. The longest write of the
//     snapshot window over it is the snapshot stall ("max/quiet p99"). The quiet window
//     comes after a restart and a full read, a different phase from the snapshot
//     window, and one longest write is at the disk's mercy: --snapshot-tail
//     (snaptail.go) compares like with like;
//   - mixed: 64 sessions, half getData and half setData of random znodes, for
//     mixedWindow: p99 and p99.9 latency, and the collector's pauses meanwhile (zkraft:
//     the delta of its go_gc_pause_seconds histogram, bucket bounds; ZooKeeper: the
//     pauses its -Xlog:gc file logged). The same on a fresh server with a
//     mixedReference-znode tree, once per target, is the tail to hold it against;
//   - watches: 5 sessions each set a data and a child watch on the first 100,000 znodes;
//     the live heap's growth (after full collections) per watch.
const (
	storageWindow   = 15 * time.Second
	storageSessions = 8
	storageFanout   = 1000 // children per dir
	storageSnap     = "20000"
	storageNoSnap   = "1000000000"
	storageQuiet    = 10 * time.Second
)

type storageResult struct {
	Target          string      `json:"target"`
	Znodes          int         `json:"znodes"`
	JavaHeap        string      `json:"java_heap,omitempty"`
	LoadSeconds     float64     `json:"load_seconds"`
	RSSBytes        int64       `json:"rss_bytes"`
	HeapEmptyBytes  int64       `json:"heap_empty_bytes"`
	HeapFilledBytes int64       `json:"heap_filled_bytes"`
	HeapPerZnode    float64     `json:"heap_bytes_per_znode_beyond_data"`
	MaxStallMs      float64     `json:"max_write_ms"`
	P999Ms          float64     `json:"p999_write_ms"`
	Writes          uint64      `json:"writes"`
	SnapBytes       int64       `json:"snapshot_bytes"`
	RestartSec      float64     `json:"restart_seconds"`
	ReadSeconds     float64     `json:"full_read_seconds"`
	RSSReadBytes    int64       `json:"rss_after_restart_and_read_bytes"`
	QuietP99Ms      float64     `json:"quiet_p99_write_ms"`
	QuietMaxMs      float64     `json:"quiet_max_write_ms"`
	Mixed           mixedResult `json:"mixed"`
	Watches         int         `json:"watches"`
	WatchHeapBytes  int64       `json:"watch_heap_bytes"`
	Error           string      `json:"error,omitempty"`
}

// storageReport is what --json writes in storage mode.
type storageReport struct {
	ValueSize int             `json:"value_size"`
	Results   []storageResult `json:"results"`
	Reference []mixedResult   `json:"mixed_reference"`
}

func runStorage(cfg config, out io.Writer) int {
	rep := storageReport{ValueSize: cfg.valueSize}
	failed := false
	for _, name := range cfg.targets {
		cfg.logf("storage: %s mixed reference with %d znodes", name, mixedReference)
		m := measureMixedReference(cfg, name)
		if m.Error != "" {
			failed = true
			cfg.logf("storage: %s reference: %s", name, m.Error)
		}
		rep.Reference = append(rep.Reference, m)
	}
	for _, n := range cfg.storage {
		for _, name := range cfg.targets {
			cfg.logf("storage: %s with %d znodes", name, n)
			r := measureStorage(cfg, name, n)
			if r.Error != "" {
				failed = true
				cfg.logf("storage: %s with %d znodes: %s", name, n, r.Error)
			}
			rep.Results = append(rep.Results, r)
		}
	}
	writeStorageTable(out, cfg, rep.Results)
	writeMemoryTable(out, rep)
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, rep); err != nil {
			fmt.Fprintln(os.Stderr, "zkbench:", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

// javaHeapFor is ZooKeeper's -Xmx for a tree of n znodes: the 4 GiB its storage runs
// always had, and 16 GiB past 2M znodes (a 10M tree of 100 B values needs some 5 GiB
// live; the machine these runs are for has 24 GiB, and the servers run one at a time).
func javaHeapFor(n int) string {
	if n > 2_000_000 {
		return "16g"
	}
	return "4g"
}

// storageServer is a started target with its memory probe; stop stops it and removes
// the probe's files.
type storageServer struct {
	srv   *ztest.Server
	probe *memProbe
	tmp   string
}

func (s *storageServer) stop() {
	s.srv.Stop()
	os.RemoveAll(s.tmp)
}

func startStorageServer(cfg config, name string, n int, snapCount string) (*storageServer, error) {
	tmp, err := os.MkdirTemp("", "zkbench-storage")
	if err != nil {
		return nil, err
	}
	opts := ztest.Options{ExtraConfig: map[string]string{"maxClientCnxns": "0", "snapCount": snapCount},
		Logf: cfg.logf, JavaHeap: javaHeapFor(n)}
	probe := &memProbe{name: name}
	var srv *ztest.Server
	if name == "zkraft" {
		port, err := ztest.FreePort()
		if err != nil {
			os.RemoveAll(tmp)
			return nil, err
		}
		opts.ExtraConfig["metricsProvider.httpPort"] = fmt.Sprint(port)
		opts.ExtraConfig["metricsProvider.httpHost"] = "127.0.0.1"
		opts.ExtraConfig["zkraft.debug.gcEndpoint"] = "true"
		probe.metricsURL = fmt.Sprintf("http://127.0.0.1:%d", port)
		opts.Binary = cfg.zkraftBin
		srv, err = ztest.StartZkraft(opts)
	} else {
		probe.gcLog = filepath.Join(tmp, "gc.log")
		opts.JVMFlags = []string{"-Xlog:gc:file=" + probe.gcLog + ":uptime,level,tags:filecount=0"}
		srv, err = ztest.StartZooKeeper(opts)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	probe.pid = func() int { return srv.Cmd.Process.Pid }
	return &storageServer{srv: srv, probe: probe, tmp: tmp}, nil
}

func storageValue(cfg config) []byte {
	value := make([]byte, cfg.valueSize)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	return value
}

// measureMixedReference is the mixed load on a fresh mixedReference-znode tree, with
// snapshots off as in the storage runs' mixed phase.
func measureMixedReference(cfg config, name string) mixedResult {
	s, conns, err := startFilled(cfg, name, mixedReference, storageNoSnap)
	if err != nil {
		return mixedResult{Target: name, Znodes: mixedReference, Error: err.Error()}
	}
	defer s.stop()
	closeAll(conns)
	return runMixed(s.srv.Addr, s.probe, name, mixedReference, storageValue(cfg))
}

// startFilled starts a storage server with snapCount, opens the storage sessions on it
// and fills it with n znodes. On an error nothing is left running.
func startFilled(cfg config, name string, n int, snapCount string) (*storageServer, []*zk.Conn, error) {
	s, err := startStorageServer(cfg, name, n, snapCount)
	if err != nil {
		return nil, nil, err
	}
	conns, err := connectAndFill(cfg, []string{s.srv.Addr}, n, s.stop)
	if err != nil {
		return nil, nil, err
	}
	return s, conns, nil
}

// connectAndFill opens the storage sessions, spread over members, and fills the tree with
// n znodes; on an error it closes them and calls stop.
func connectAndFill(cfg config, members []string, n int, stop func()) ([]*zk.Conn, error) {
	conns, err := connectAll(members, roundRobin(storageSessions, len(members)))
	if err != nil {
		stop()
		return nil, err
	}
	if err := fillTree(conns, n, storageValue(cfg)); err != nil {
		closeAll(conns)
		stop()
		return nil, fmt.Errorf("fill: %w", err)
	}
	return conns, nil
}

func measureStorage(cfg config, name string, n int) (r storageResult) {
	r = storageResult{Target: name, Znodes: n}
	if name != "zkraft" {
		r.JavaHeap = javaHeapFor(n)
	}
	s, err := startStorageServer(cfg, name, n, storageSnap)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer s.stop()
	srv := s.srv
	if r.HeapEmptyBytes, err = s.probe.liveHeap(); err != nil {
		r.Error = "empty heap: " + err.Error()
		return r
	}
	conns, err := connectAll([]string{srv.Addr}, roundRobin(storageSessions, 1))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer func() { closeAll(conns) }()
	value := storageValue(cfg)
	start := time.Now()
	if err := fillTree(conns, n, value); err != nil {
		r.Error = "fill: " + err.Error()
		return r
	}
	r.LoadSeconds = time.Since(start).Seconds()
	time.Sleep(2 * time.Second)
	r.RSSBytes = rss(srv.Cmd.Process.Pid)
	// The sessions are closed over the full collection: one of ZooKeeper's large heap
	// stops its JVM longer than they would live.
	closeAll(conns)
	conns = nil
	if r.HeapFilledBytes, err = s.probe.liveHeap(); err != nil {
		r.Error = "filled heap: " + err.Error()
		return r
	}
	if conns, err = connectAll([]string{srv.Addr}, roundRobin(storageSessions, 1)); err != nil {
		r.Error = err.Error()
		return r
	}
	r.HeapPerZnode = float64(r.HeapFilledBytes-r.HeapEmptyBytes-int64(n)*int64(cfg.valueSize)) / float64(n)

	// Writes while snapshots of the whole tree are taken.
	hist, writes, err := writeWindow(conns, n, value, storageWindow)
	if err != nil {
		r.Error = "writes: " + err.Error()
		return r
	}
	r.MaxStallMs = ms(hist.max)
	r.P999Ms = ms(hist.quantile(0.999))
	r.Writes = writes
	time.Sleep(5 * time.Second) // a snapshot being written when the window closed finishes
	r.SnapBytes = newestSnapshotSize(name, srv.DataDir)

	// Restart after a crash, with snapshots off from then on (snapCount past anything
	// the quiet window and the mixed load write). A large tree takes long to load: the
	// wait grows with it.
	last := storagePath(n - 1)
	closeAll(conns)
	conns = nil
	srv.Kill()
	if err := srv.SetConfig("snapCount", storageNoSnap); err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	limit := time.Minute + time.Duration(n/1_000_000)*30*time.Second
	start = time.Now()
	if err := srv.Restart(false); err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	if err := awaitServing(srv.Addr, limit); err != nil {
		r.Error = "restart: " + err.Error()
		return r
	}
	if err := awaitRead(srv.Addr, last, limit); err != nil {
		r.Error = "restart: read " + last + ": " + err.Error()
		return r
	}
	r.RestartSec = time.Since(start).Seconds()

	// A read of every znode, then the RSS: what the restarted server holds to serve the
	// whole tree.
	if conns, err = connectAll([]string{srv.Addr}, roundRobin(storageSessions, 1)); err != nil {
		r.Error = "read: " + err.Error()
		return r
	}
	start = time.Now()
	if err := forEachZnode(conns, n, func(c *zk.Conn, i int) error { _, _, err := c.Get(storagePath(i)); return err }); err != nil {
		r.Error = "full read: " + err.Error()
		return r
	}
	r.ReadSeconds = time.Since(start).Seconds()
	r.RSSReadBytes = rss(srv.Cmd.Process.Pid)

	// The same writes on the same tree without snapshots: the tail to hold the snapshot
	// window's against.
	quiet, _, err := writeWindow(conns, n, value, storageQuiet)
	if err != nil {
		r.Error = "quiet writes: " + err.Error()
		return r
	}
	r.QuietP99Ms = ms(quiet.quantile(0.99))
	r.QuietMaxMs = ms(quiet.max)
	closeAll(conns)
	conns = nil

	r.Mixed = runMixed(srv.Addr, s.probe, name, n, value)
	if r.Mixed.Error != "" {
		r.Error = r.Mixed.Error
		return r
	}
	if r.Watches, r.WatchHeapBytes, err = measureWatches(srv.Addr, s.probe, n); err != nil {
		r.Error = "watches: " + err.Error()
	}
	return r
}

// awaitServing polls srvr until it reports a mode, as ztest does, for up to limit.
func awaitServing(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if out, err := ztest.FourLetter(addr, "srvr"); err == nil && strings.Contains(out, "\nMode: ") {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not serve within %v", addr, limit)
}

// writeWindow has every session set pseudo-random nodes of the n, one in flight each, for d.
func writeWindow(conns []*zk.Conn, n int, value []byte, d time.Duration) (histogram, uint64, error) {
	return timedSessions(conns, d, func(i int) func(c *zk.Conn) error {
		k := i
		return func(c *zk.Conn) error {
			k = (k*7919 + 13) % n
			_, err := c.Set(storagePath(k), value, -1)
			return err
		}
	})
}

// timedSessions runs, on every session at once for d, the op newOp(i) makes for session
// i, one at a time, and returns the latency of every op and how many ran; the first
// error stops its session and is returned.
func timedSessions(conns []*zk.Conn, d time.Duration, newOp func(i int) func(c *zk.Conn) error) (histogram, uint64, error) {
	var hist histogram
	var mu sync.Mutex
	var ops atomic.Uint64
	var werr atomic.Value
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		op := newOp(i)
		go func() {
			defer wg.Done()
			var h histogram
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := op(c); err != nil {
					werr.Store(err)
					return
				}
				h.record(time.Since(t0))
				ops.Add(1)
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
	return hist, ops.Load(), nil
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
