package main

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// errStopped ends a lock wait when the timed part is over.
var errStopped = errors.New("stopped")

// maxLockChecks bounds the getChildren/watch rounds of one acquisition; each round needs
// a predecessor to vanish, so more rounds than sessions means something is wrong.
const maxLockChecks = 10_000

// runLock has every session take and release one lock, the ZooKeeper recipe: create an
// ephemeral sequential node, list the lock's children, hold the lock if ours is the
// lowest, else watch the next lower one (not the parent, so no herd) and look again
// when it goes. One goroutine per session: a session holds at most one place in line.
func runLock(c *cell) stats {
	type outcome struct {
		hist histogram
		ops  uint64
		errs uint64
		err  error
	}
	outs := make([]outcome, len(c.conns))
	stop := make(chan struct{})
	start := time.Now()
	deadline := start.Add(c.duration)
	timer := time.AfterFunc(c.duration, func() { close(stop) })
	defer timer.Stop()
	var wg sync.WaitGroup
	for i, conn := range c.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[i]
			for consecutive := 0; time.Now().Before(deadline); {
				t0 := time.Now()
				me, err := acquire(conn, c.base, stop)
				d := time.Since(t0)
				if me != "" {
					// Release; the next in line is watching this node.
					if derr := conn.Delete(me, -1); derr != nil && err == nil {
						err = derr
					}
				}
				switch {
				case errors.Is(err, errStopped):
					return
				case err != nil:
					o.errs++
					o.err = err
					if consecutive++; consecutive >= maxConsecErrors {
						return
					}
				default:
					consecutive = 0
					o.ops++
					o.hist.record(d)
				}
			}
		}()
	}
	wg.Wait()
	total := stats{elapsed: time.Since(start)}
	var lastErr error
	for i := range outs {
		total.hist.merge(&outs[i].hist)
		total.ops += outs[i].ops
		total.errs += outs[i].errs
		if outs[i].err != nil {
			lastErr = outs[i].err
		}
	}
	if total.errs > 0 {
		total.note = fmt.Sprintf("%d errors, last: %v", total.errs, lastErr)
	}
	return total
}

// acquire returns once this session holds the lock under dir, with the path of its lock
// node; the caller releases it by deleting that path, which it must do also on error.
func acquire(conn *zk.Conn, dir string, stop <-chan struct{}) (string, error) {
	me, err := conn.Create(dir+"/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, worldACL)
	if err != nil {
		return "", err
	}
	name := path.Base(me)
	for range maxLockChecks {
		children, _, err := conn.Children(dir)
		if err != nil {
			return me, err
		}
		// Equal prefixes and zero-padded sequence numbers: string order is queue order.
		slices.Sort(children)
		i := slices.Index(children, name)
		switch {
		case i < 0:
			return me, fmt.Errorf("lock node %s vanished", me)
		case i == 0:
			return me, nil
		}
		ok, _, ch, err := conn.ExistsW(dir + "/" + children[i-1])
		if err != nil {
			return me, err
		}
		if !ok {
			continue // gone between the listing and the watch
		}
		select {
		case <-ch:
		case <-stop:
			return me, errStopped
		}
	}
	return me, fmt.Errorf("lock: not acquired after %d checks", maxLockChecks)
}
