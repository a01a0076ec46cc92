package main

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// The phases of the storage measurements beyond the fill and the snapshot window: the
// full read after a restart, the mixed load and the watches.
const (
	mixedSessions  = 64
	mixedWindow    = 10 * time.Second
	mixedReference = 10_000 // the small tree the mixed tail is held against
	watchSessions  = 5
	watchPaths     = 100_000 // each watch session sets a data and a child watch on each
	fillChunk      = 100_000 // creates built and sent at a time (a 10M fill fits zkbench's memory)
)

// storagePath is the i-th znode of a storage tree: storageFanout under each dir.
func storagePath(i int) string {
	return fmt.Sprintf("/s/d%05d/n%04d", i/storageFanout, i%storageFanout)
}

// fillTree creates /s, its dirs and n znodes of value in multis over the sessions.
func fillTree(conns []*zk.Conn, n int, value []byte) error {
	if _, err := conns[0].Create("/s", nil, 0, worldACL); err != nil {
		return err
	}
	var ops []any
	for d := 0; d < (n+storageFanout-1)/storageFanout; d++ {
		ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/s/d%05d", d), Acl: worldACL})
	}
	if err := bulk(conns[:1], ops); err != nil {
		return err
	}
	for lo := 0; lo < n; lo += fillChunk {
		ops = ops[:0]
		for i := lo; i < min(lo+fillChunk, n); i++ {
			ops = append(ops, &zk.CreateRequest{Path: storagePath(i), Data: value, Acl: worldACL})
		}
		if err := bulk(conns, ops); err != nil {
			return err
		}
	}
	return nil
}

// forEachZnode calls op for every i in [0, n) from 4 goroutines per session and stops at
// the first error.
func forEachZnode(conns []*zk.Conn, n int, op func(c *zk.Conn, i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for g := range len(conns) * 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns[g%len(conns)]
			for first.Load() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := op(c, i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// mixedResult is the mixed load on a tree: 64 sessions, one request in flight each,
// half getData and half setData of random znodes, and the collector's pauses meanwhile.
type mixedResult struct {
	Target   string  `json:"target"`
	Znodes   int     `json:"znodes"`
	Ops      uint64  `json:"ops"`
	P99Ms    float64 `json:"p99_ms"`
	P999Ms   float64 `json:"p999_ms"`
	GCPauses uint64  `json:"gc_pauses"`
	GCP99Ms  float64 `json:"gc_pause_p99_ms"`
	GCMaxMs  float64 `json:"gc_pause_max_ms"`
	// GCStopP99Ms is zkraft's p99 of the part of a pause spent stopping the threads
	// (waiting for them to be scheduled, on a busy machine); 0 for ZooKeeper.
	GCStopP99Ms float64 `json:"gc_pause_stopping_p99_ms,omitempty"`
	Error       string  `json:"error,omitempty"`
}

func runMixed(addr string, probe *memProbe, name string, n int, value []byte) (r mixedResult) {
	r = mixedResult{Target: name, Znodes: n}
	conns, err := connectAll([]string{addr}, roundRobin(mixedSessions, 1))
	if err != nil {
		r.Error = "mixed: " + err.Error()
		return r
	}
	defer closeAll(conns)
	mark, err := probe.mark()
	if err != nil {
		r.Error = "mixed: gc pauses: " + err.Error()
		return r
	}
	hist, ops, err := timedSessions(conns, mixedWindow, func(i int) func(c *zk.Conn) error {
		rng := rand.New(rand.NewPCG(uint64(i), 1))
		return func(c *zk.Conn) error {
			p := storagePath(rng.IntN(n))
			if rng.IntN(2) == 0 {
				_, _, err := c.Get(p)
				return err
			}
			_, err := c.Set(p, value, -1)
			return err
		}
	})
	if err != nil {
		r.Error = "mixed: " + err.Error()
		return r
	}
	r.Ops = ops
	r.P99Ms = ms(hist.quantile(0.99))
	r.P999Ms = ms(hist.quantile(0.999))
	st, err := probe.pausesSince(mark)
	if err != nil {
		r.Error = "mixed: gc pauses: " + err.Error()
		return r
	}
	r.GCPauses, r.GCP99Ms, r.GCMaxMs, r.GCStopP99Ms = st.n, ms(st.p99), ms(st.longest), ms(st.stopP99)
	return r
}

// measureWatches has watchSessions sessions each set a data watch (getData) and a
// child watch (getChildren) on the first min(n, watchPaths) znodes and returns the
// watches set and the server's heap they cost (after a full collection, before and
// after; the sessions are open in both, so only the watches differ). The channels
// go-zookeeper keeps for them are in zkbench's memory, not the server's.
func measureWatches(addr string, probe *memProbe, n int) (watches int, delta int64, err error) {
	// ZooKeeper's full collections of a large heap stop its JVM for many seconds: the
	// sessions ask for ZooKeeper's longest timeout (20 ticks), so that their watches
	// outlive them.
	var conns []*zk.Conn
	defer func() { closeAll(conns) }()
	for range watchSessions {
		c, err := connectWith(addr, 40*time.Second)
		if err != nil {
			return 0, 0, err
		}
		conns = append(conns, c)
	}
	before, err := probe.liveHeap()
	if err != nil {
		return 0, 0, err
	}
	paths := min(n, watchPaths)
	for _, c := range conns {
		err := forEachZnode([]*zk.Conn{c, c, c, c}, paths, func(c *zk.Conn, i int) error {
			if _, _, _, err := c.GetW(storagePath(i)); err != nil {
				return err
			}
			_, _, _, err := c.ChildrenW(storagePath(i))
			return err
		})
		if err != nil {
			return 0, 0, err
		}
	}
	after, err := probe.liveHeap()
	if err != nil {
		return 0, 0, err
	}
	return 2 * paths * len(conns), after - before, nil
}

// awaitRead connects to addr and reads path until that succeeds or limit passes (a
// restarting server refuses connections, then may not serve yet).
func awaitRead(addr, path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := connect(addr)
		if err == nil {
			_, _, err = c.Get(path)
			c.Close()
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not served within %v: %w", limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
