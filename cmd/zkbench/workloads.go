package main

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// workload is one kind of load. run does the untimed preparation it needs and then the
// timed part; cleanup (optional) removes what run left, untimed.
type workload struct {
	name string
	// op says what one counted operation is (ops/s and latency are per op).
	op string
	// place says which member (an index into the target's members, followers first, see
	// byRole) each session of a cell with this session count connects to; nil: that many
	// sessions, round-robin. Workloads with sessions beyond the count list them last.
	place   func(sessions, members int) []int
	run     func(c *cell) stats
	cleanup func(c *cell)
}

// multiCreates is the number of creates in one multi of the multi workload.
const multiCreates = 3

// maxPrepared bounds the nodes the delete workload prepares, over all its workers.
const maxPrepared = 400_000

var workloads = []*workload{
	{name: "create", op: "create of a persistent node with a value", run: runCreate, cleanup: cleanupCreated},
	{name: "set", op: "setData of a random node of the 1000-node data set", run: driveWith(setOp)},
	{name: "get", op: "getData of a random data-set node", run: driveWith(getOp)},
	{name: "exists", op: "exists of a random data-set node", run: driveWith(existsOp)},
	{name: "getChildren", op: "getChildren of a random data-set dir (10 children)", run: driveWith(childrenOp)},
	{name: "delete", op: "delete of a node prepared (by multis, untimed) before the timed part", run: runDelete, cleanup: cleanupPrepared},
	{name: "multi", op: fmt.Sprintf("multi of %d creates", multiCreates), run: runMulti, cleanup: cleanupCreated},
	{name: "ephemeral", op: "create of an ephemeral sequential node, then its delete (the pair is one op)", run: driveWith(ephemeralOp)},
	{name: "session", op: "a new session on the worker's member: connect until it has a session, then close it (the pair is one op)", run: runSession},
	{name: "mixed", op: "90% getData, 10% setData on the data set", run: driveWith(mixedOp)},
	{name: "lock", op: "lock acquisition: create -e -s, getChildren, watch the predecessor; latency = create to holding (one goroutine per session)", run: runLock},
	{name: "watch", op: "notification: N sessions watch one node, one more session sets it once all re-armed; latency = set sent to event received", place: withWriter, run: runWatch},
	{name: "visibility-watch", op: "a setData through member A seen by a watch on member B; latency = A's reply to B's event, 0 if the event came first (one writer/reader pair per session)", place: placePairs, run: runVisibilityWatch, cleanup: cleanupPairs},
	{name: "visibility-poll", op: "a setData through member A read back on member B with getData from A's reply on; latency = A's reply to the first read of the new version (one writer/reader pair per session)", place: placePairs, run: runVisibilityPoll, cleanup: cleanupPairs},
}

func workloadNames() []string {
	out := make([]string, len(workloads))
	for i, w := range workloads {
		out[i] = w.name
	}
	return out
}

func workloadByName(name string) *workload {
	for _, w := range workloads {
		if w.name == name {
			return w
		}
	}
	return nil
}

func driveWith(op opFunc) func(c *cell) stats {
	return func(c *cell) stats { return c.drive(op) }
}

// node names the k-th node a worker creates or prepares under the cell's base.
func (w *worker) node(k int) string { return fmt.Sprintf("%s/w%d-%d", w.c.base, w.id, k) }

func (w *worker) randomData() string { return w.c.b.dataPaths[w.rng.IntN(len(w.c.b.dataPaths))] }

func setOp(w *worker) error {
	_, err := w.conn.Set(w.randomData(), w.c.b.value, -1)
	return err
}

func getOp(w *worker) error {
	_, _, err := w.conn.Get(w.randomData())
	return err
}

func existsOp(w *worker) error {
	ok, _, err := w.conn.Exists(w.randomData())
	if err == nil && !ok {
		err = zk.ErrNoNode
	}
	return err
}

func childrenOp(w *worker) error {
	dirs := w.c.b.dataDirs
	_, _, err := w.conn.Children(dirs[w.rng.IntN(len(dirs))])
	return err
}

func ephemeralOp(w *worker) error {
	p, err := w.conn.Create(w.c.base+"/e-", w.c.b.value, zk.FlagEphemeral|zk.FlagSequence, worldACL)
	if err != nil {
		return err
	}
	return w.conn.Delete(p, -1)
}

// The session workload's untimed lead-in: every worker makes leadInOps ops first, for
// at most leadInMax.
const (
	leadInOps = 8
	leadInMax = 20 * time.Second
)

// leadIn runs op untimed on a worker per session and depth until each has made leadInOps
// of them (or leadInMax is over). Each session op costs zkbench two 1.5 MiB buffers
// (go-zookeeper's Conn), so the first cell at 64 sessions (256 callers) grows zkbench's
// heap to over 1 GiB, and its first touch of that memory (some 300,000 page faults,
// seconds of system CPU on a 2-core machine shared with the servers) slowed whichever target ran that cell first
// by half or more: measured alone, 256 callers made 183 ops/s while the heap grew and
// 1,085 right after, against the same zkraft cluster. A fixed lead-in of 2 s did not
// cover the growth; a number of ops per worker does.
func leadIn(c *cell, op opFunc) {
	deadline := time.Now().Add(leadInMax)
	var wg sync.WaitGroup
	for _, w := range c.newWorkers(len(c.conns)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < leadInOps && time.Now().Before(deadline); k++ {
				_ = op(w)
			}
		}()
	}
	wg.Wait()
}

// sessionOp measures what a client's start and stop cost: the createSession and
// closeSession entries through the log, and the handshake. A timed worker also records
// the two halves apart (runSession's note).
func sessionOp(w *worker) error {
	t0 := time.Now()
	conn, err := connect(w.conn.Server())
	if err != nil {
		return err
	}
	t1 := time.Now()
	conn.Close()
	if p := w.phases; p != nil {
		p.connect.record(t1.Sub(t0))
		p.close.record(time.Since(t1))
	}
	return nil
}

// sessionPhases is a session op's time split at the session's arrival: the connect
// (dial, handshake, createSession) and the close (closeSession until its answer, or
// go-zookeeper's give-up after a second).
type sessionPhases struct{ connect, close histogram }

// runSession times sessionOp after its lead-in and notes where the time went: the two
// phases' p50 and p99, and how many closes took go-zookeeper's full second (the client
// stops waiting for closeSession's answer then) or connects a second or more (a SYN the
// server's full accept queue dropped is sent again after a second).
func runSession(c *cell) stats {
	leadIn(c, sessionOp)
	ws := c.newWorkers(len(c.conns))
	for _, w := range ws {
		w.phases = new(sessionPhases)
	}
	st := c.driveWorkers(ws, sessionOp)
	var all sessionPhases
	for _, w := range ws {
		all.connect.merge(&w.phases.connect)
		all.close.merge(&w.phases.close)
	}
	if all.connect.n > 0 {
		st.note = joinNote(fmt.Sprintf("connect p50 %.1f p99 %.1f max %.1f ms, %d over 1 s; close p50 %.1f p99 %.1f max %.1f ms, %d over 1 s",
			ms(all.connect.quantile(0.5)), ms(all.connect.quantile(0.99)), ms(all.connect.max), all.connect.over(time.Second),
			ms(all.close.quantile(0.5)), ms(all.close.quantile(0.99)), ms(all.close.max), all.close.over(time.Second)), st.note)
	}
	return st
}

func mixedOp(w *worker) error {
	if w.rng.IntN(10) == 0 {
		return setOp(w)
	}
	return getOp(w)
}

// runCreate and runMulti keep their workers on the cell so cleanup knows the names.
func runCreate(c *cell) stats {
	c.workers = c.newWorkers(len(c.conns))
	return c.driveWorkers(c.workers, func(w *worker) error {
		// The name is used up even if the create fails: its outcome may be unknown.
		p := w.node(w.n)
		w.n++
		_, err := w.conn.Create(p, w.c.b.value, 0, worldACL)
		return err
	})
}

func runMulti(c *cell) stats {
	c.workers = c.newWorkers(len(c.conns))
	return c.driveWorkers(c.workers, func(w *worker) error {
		var ops [multiCreates]any
		for i := range ops {
			ops[i] = &zk.CreateRequest{Path: w.node(w.n), Data: w.c.b.value, Acl: worldACL}
			w.n++
		}
		_, err := w.conn.Multi(ops[:]...)
		return err
	})
}

func cleanupCreated(c *cell) {
	var paths []string
	for _, w := range c.workers {
		for k := range w.n {
			paths = append(paths, w.node(k))
		}
	}
	bulkDelete(c.conns, paths)
}

// runDelete prepares nodes for every worker with multis for at most half the duration
// (and 3s), then times single deletes of them. A worker that runs out ends the cell:
// the rate is then over the time until that moment, and the report says so.
func runDelete(c *cell) stats {
	c.workers = c.newWorkers(len(c.conns))
	prepFor := min(c.duration/2, 3*time.Second)
	deadline := time.Now().Add(prepFor)
	batch := batchFor(c.b.value)
	perWorker := max(maxPrepared/len(c.workers), batch)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.limit < perWorker && time.Now().Before(deadline) {
				ops := make([]any, batch)
				for i := range ops {
					ops[i] = &zk.CreateRequest{Path: w.node(w.limit + i), Data: w.c.b.value, Acl: worldACL}
				}
				if _, err := w.conn.Multi(ops...); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				w.limit += batch
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return stats{err: fmt.Errorf("prepare: %w", errors.Join(errs...))}
	}
	return c.driveWorkers(c.workers, func(w *worker) error {
		if w.n >= w.limit {
			return errExhausted
		}
		err := w.conn.Delete(w.node(w.n), -1)
		w.n++
		return err
	})
}

func cleanupPrepared(c *cell) {
	var paths []string
	for _, w := range c.workers {
		for k := w.n; k < w.limit; k++ {
			paths = append(paths, w.node(k))
		}
	}
	bulkDelete(c.conns, paths)
}

// bulkDelete deletes paths in multis; a multi that fails (a node whose create had an
// unknown outcome and did not happen) is retried one delete at a time.
func bulkDelete(conns []*zk.Conn, paths []string) {
	ops := make([]any, len(paths))
	for i, p := range paths {
		ops[i] = &zk.DeleteRequest{Path: p, Version: -1}
	}
	bulkWith(conns, ops, func(conn *zk.Conn, batch []any) {
		if _, err := conn.Multi(batch...); err == nil {
			return
		}
		for _, op := range batch {
			_ = conn.Delete(op.(*zk.DeleteRequest).Path, -1)
		}
	})
}
