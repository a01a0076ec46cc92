package main

import (
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// visibilityTimeout bounds the wait for one write to show on the reader's member. ZooKeeper
// promises that a member catches up, not when; a lag this long is a stuck member, and the
// op fails rather than stall its cell.
const visibilityTimeout = 5 * time.Second

// pair is one writer/reader couple of the visibility workloads, with a node of its own so
// pairs never see each other's writes.
type pair struct {
	writer, reader *zk.Conn
	node           string
}

// visibleFunc makes one write through p.writer and waits until p.reader sees it. It returns
// the lag from the writer's reply to the reader seeing the change, and whether the op was
// remarkable in the way its workload counts in the cell's note.
type visibleFunc func(p *pair, value []byte) (lag time.Duration, marked bool, err error)

// placePairs puts pair i's writer (session i) on member i mod N and its reader (session
// S+i) on member (i+1) mod N: two different members whenever there are two, and every
// member writing for some pairs and reading for others.
func placePairs(sessions, members int) []int {
	at := make([]int, 2*sessions)
	for i := range sessions {
		at[i] = i % members
		at[sessions+i] = (i + 1) % members
	}
	return at
}

func pairNode(c *cell, i int) string { return fmt.Sprintf("%s/p%d", c.base, i) }

func runVisibilityWatch(c *cell) stats {
	return runPairs(c, visibleByWatch, "event on B before A's reply")
}

func runVisibilityPoll(c *cell) stats {
	return runPairs(c, visibleByPoll, "first read on B after A's reply stale")
}

// runPairs creates each pair's node, then drives one goroutine per pair (--depth unused: a
// pair waits for one write at a time) and notes which share of the ops visible marked.
func runPairs(c *cell, visible visibleFunc, marked string) stats {
	n := len(c.conns) / 2
	pairs := make([]*pair, n)
	ws := make([]*worker, n)
	for i := range n {
		p := &pair{writer: c.conns[i], reader: c.conns[n+i], node: pairNode(c, i)}
		if _, err := p.writer.Create(p.node, c.b.value, 0, worldACL); err != nil {
			return stats{err: fmt.Errorf("create %s: %w", p.node, err)}
		}
		// The reader's member may not have applied the create yet; a read must not fail
		// with NoNode, so the reader syncs first, as a ZooKeeper client must.
		if _, err := p.reader.Sync(p.node); err != nil {
			return stats{err: fmt.Errorf("sync %s: %w", p.node, err)}
		}
		pairs[i] = p
		ws[i] = &worker{c: c, id: i, conn: p.writer}
	}
	counts := make([]uint64, n) // each written by its pair's goroutine only
	st := c.driveMeasured(ws, func(w *worker) (time.Duration, error) {
		lag, mark, err := visible(pairs[w.id], c.b.value)
		if err == nil && mark {
			counts[w.id]++
		}
		return lag, err
	})
	var sum uint64
	for _, k := range counts {
		sum += k
	}
	st.marked = sum
	if st.ops > 0 {
		st.note = joinNote(fmt.Sprintf("%s in %.0f%% of ops", marked, 100*float64(sum)/float64(st.ops)), st.note)
	}
	return st
}

// visibleByWatch sets a data watch through the reader, sets the node through the writer,
// and returns the time from the writer's reply to the reader's event. An event that came
// first is a lag of 0 (the histogram has no negative values) and is marked.
func visibleByWatch(p *pair, value []byte) (time.Duration, bool, error) {
	_, _, events, err := p.reader.GetW(p.node)
	if err != nil {
		return 0, false, fmt.Errorf("reader: %w", err)
	}
	if _, err := p.writer.Set(p.node, value, -1); err != nil {
		return 0, false, fmt.Errorf("writer: %w", err)
	}
	replied := time.Now()
	var (
		ev    zk.Event
		lag   time.Duration
		early bool
	)
	select {
	case ev = <-events:
		early = true
	default:
		timeout := time.NewTimer(visibilityTimeout)
		defer timeout.Stop()
		select {
		case ev = <-events:
			lag = time.Since(replied)
		case <-timeout.C:
			return 0, false, fmt.Errorf("no event for %s on the reader within %v of the reply", p.node, visibilityTimeout)
		}
	}
	if ev.Type != zk.EventNodeDataChanged {
		return 0, false, fmt.Errorf("unexpected event %v (%v)", ev.Type, ev.Err)
	}
	return lag, early, nil
}

// visibleByPoll sets the node through the writer, then reads it through the reader back to
// back from the reply on, and returns the time from the reply to the return of the first
// read that has the version the write made. Reading only after the reply is what a client
// does that was told of the write another way; a stale first read is marked.
func visibleByPoll(p *pair, value []byte) (time.Duration, bool, error) {
	written, err := p.writer.Set(p.node, value, -1)
	if err != nil {
		return 0, false, fmt.Errorf("writer: %w", err)
	}
	replied := time.Now()
	for reads := 0; ; reads++ {
		_, got, err := p.reader.Get(p.node)
		if err != nil {
			return 0, false, fmt.Errorf("reader: %w", err)
		}
		if got.Version >= written.Version {
			return time.Since(replied), reads > 0, nil
		}
		if time.Since(replied) > visibilityTimeout {
			return 0, false, fmt.Errorf("%s on the reader still at version %d, %v after version %d was written", p.node, got.Version, visibilityTimeout, written.Version)
		}
	}
}

func cleanupPairs(c *cell) {
	paths := make([]string, len(c.conns)/2)
	for i := range paths {
		paths[i] = pairNode(c, i)
	}
	bulkDelete(c.conns, paths)
}
