package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// rearmTimeout is how long the writer waits for every watcher to be notified and to set
// its watch again; a notification that does not come within it ends the cell.
const rearmTimeout = 5 * time.Second

// withWriter places the watch workload's sessions: the watchers round-robin and the
// writer after them, on member sessions mod members.
func withWriter(sessions, members int) []int { return roundRobin(sessions+1, members) }

// runWatch measures watch fan-out. Every measured session sets a data watch on the cell's
// base node (getData with watch); the extra session sets the node's data once all the
// watches are in place, each watcher records the time from that set being sent to its
// event arriving, and sets its watch again. Rounds are lock-step, so no change is ever
// coalesced and every set fires exactly one notification per session.
func runWatch(c *cell) stats {
	watchers := c.conns[:len(c.conns)-1]
	writer := c.conns[len(c.conns)-1]
	node := c.base

	type outcome struct {
		hist histogram
		ops  uint64
		errs uint64
		err  error
	}
	outs := make([]outcome, len(watchers))
	armed := make(chan error, len(watchers))
	stop := make(chan struct{})
	// On a cluster the watchers may be on other members than the session that created the
	// node: as any ZooKeeper client must, they sync before reading what another wrote.
	for _, conn := range watchers {
		if _, err := conn.Sync(node); err != nil {
			return stats{err: fmt.Errorf("sync: %w", err)}
		}
	}
	var sentAt atomic.Int64 // time of the latest set, as time.Since(start)
	start := time.Now()
	var wg sync.WaitGroup
	for i, conn := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[i]
			for {
				_, _, ch, err := conn.GetW(node)
				armed <- err
				if err != nil {
					return
				}
				select {
				case ev := <-ch:
					d := time.Since(start) - time.Duration(sentAt.Load())
					if ev.Type != zk.EventNodeDataChanged {
						o.errs++
						o.err = fmt.Errorf("unexpected event %v (%v)", ev.Type, ev.Err)
						continue
					}
					o.ops++
					o.hist.record(d)
				case <-stop:
					return
				}
			}
		}()
	}

	var (
		total    stats
		deadline = start.Add(c.duration)
	)
	// waitArmed returns once every watcher has its watch set, or an error.
	waitArmed := func() error {
		timeout := time.NewTimer(rearmTimeout)
		defer timeout.Stop()
		for n := range watchers {
			select {
			case err := <-armed:
				if err != nil {
					return fmt.Errorf("set watch: %w", err)
				}
			case <-timeout.C:
				return fmt.Errorf("%d of %d watchers not notified and re-armed within %v", len(watchers)-n, len(watchers), rearmTimeout)
			}
		}
		return nil
	}
	for {
		if err := waitArmed(); err != nil {
			total.err = err
			break
		}
		// Checked after the wait, so the notifications of the last set are counted.
		if !time.Now().Before(deadline) {
			break
		}
		sentAt.Store(int64(time.Since(start)))
		if _, err := writer.Set(node, c.b.value, -1); err != nil {
			total.err = fmt.Errorf("writer: %w", err)
			break
		}
	}
	total.elapsed = time.Since(start)
	close(stop)
	wg.Wait()
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
