package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// errExhausted is returned by an operation that has nothing left to do (the delete
// workload out of prepared nodes); it ends the cell for every worker.
var errExhausted = errors.New("out of prepared work")

const (
	sessionTimeout  = 15 * time.Second
	connectTimeout  = 10 * time.Second
	bulkBatch       = 100       // operations per multi in untimed preparation and cleanup, at most
	bulkBytes       = 512 << 10 // data per multi in untimed preparation, at most (jute.maxbuffer is 1 MiB)
	maxConsecErrors = 100       // a worker that fails this often in a row ends the cell
	dataDirs        = 100       // the read data set: dataDirs dirs of dataChildren nodes each
	dataChildren    = 10
)

var worldACL = zk.WorldACL(zk.PermAll)

// bench is one run: its config and the znode prefix every path of the run lives under,
// unique per run so that an external server can be measured twice.
type bench struct {
	cfg   config
	root  string
	value []byte

	dataDirs  []string // the read data set, see prepareData
	dataPaths []string

	targets []*target // every target of the run, for settle
}

// cell is one workload at one session count on one target.
type cell struct {
	b     *bench
	t     *target
	conns []*zk.Conn
	base  string // a znode of its own, below root

	duration time.Duration // of the timed part

	workers []*worker // kept by workloads whose cleanup needs them
}

// stats is what the timed part of a cell produced.
type stats struct {
	hist    histogram
	ops     uint64
	errs    uint64
	elapsed time.Duration
	// cpu is the CPU seconds the server's processes used during the timed part (-1:
	// unknown, an external server without --pid).
	cpu  float64
	note string
	// marked counts the ops a workload marks (visibility: stale first reads, early events).
	marked uint64
	err    error // the cell could not run or was cut short by errors
}

func newBench(cfg config) *bench {
	v := make([]byte, cfg.valueSize)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	b := &bench{
		cfg:   cfg,
		root:  "/zkbench-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		value: v,
	}
	for d := range dataDirs {
		dir := fmt.Sprintf("%s/data/d%02d", b.root, d)
		b.dataDirs = append(b.dataDirs, dir)
		for n := range dataChildren {
			b.dataPaths = append(b.dataPaths, fmt.Sprintf("%s/n%d", dir, n))
		}
	}
	return b
}

// runBench measures every workload at every session count on every target. Cells
// interleave the targets (workload W at S sessions on the first target, then on the
// second), so a slow drift of the machine affects both alike.
func runBench(cfg config, targets []*target) *report {
	b := newBench(cfg)
	b.targets = targets
	rep := &report{cfg: cfg, started: time.Now()}
	for _, t := range targets {
		rep.targets = append(rep.targets, t.name)
		if err := b.setupTarget(t); err != nil {
			t.down = fmt.Errorf("setup: %w", err)
			cfg.logf("%s: %v", t.name, t.down)
			continue
		}
		b.warmWorkloads(t)
	}
	for _, name := range cfg.workloads {
		w := workloadByName(name)
		for _, s := range cfg.sessions {
			for _, t := range targets {
				cfg.logf("%s: %s, %d sessions", t.name, w.name, s)
				st := b.runCell(t, w, s)
				res := newResult(t, w, s, cfg, st)
				if st.err != nil {
					cfg.logf("%s: %s, %d sessions: %v", t.name, w.name, s, st.err)
				} else {
					cfg.logf("%s: %s, %d sessions: %.0f ops/s, p99 %v", t.name, w.name, s, res.OpsPerSec, st.hist.quantile(0.99))
				}
				rep.results = append(rep.results, res)
			}
		}
	}
	for _, t := range targets {
		b.teardownTarget(t)
	}
	return rep
}

// setupTarget creates the run's root and the read data set, then warms the server up.
func (b *bench) setupTarget(t *target) error {
	conns, err := connectAll(t.members, roundRobin(4, len(t.members)))
	if err != nil {
		return err
	}
	defer closeAll(conns)
	if _, err := conns[0].Create(b.root, nil, 0, worldACL); err != nil {
		return fmt.Errorf("create %s: %w", b.root, err)
	}
	if err := b.prepareData(conns); err != nil {
		return err
	}
	t.data = true
	if b.cfg.warmup > 0 {
		b.cfg.logf("%s: warmup %v", t.name, b.cfg.warmup)
		c := &cell{b: b, t: t, conns: conns, duration: b.cfg.warmup}
		c.drive(mixedOp)
	}
	return nil
}

// warmSessions and warmShare shape the untimed run of each workload before the first
// timed cell: a few sessions, for a quarter of --warmup each.
const (
	warmSessions = 4
	warmShare    = 4
)

// warmWorkloads runs every workload of the run once on t, untimed, after the mixed
// warm-up, which does not reach the code of creates, deletes, multis, sessions, locks and
// watches: a JVM meeting them first in a timed cell is measured while it compiles them
// (ZooKeeper 3.8's watch at 16 sessions made 404 and 3,205 ops/s without this, 2,912 and
// 3,944 with; its lock at one session stays uneven either way, docs/benchmarks.md).
func (b *bench) warmWorkloads(t *target) {
	d := b.cfg.warmup / warmShare
	if d <= 0 {
		return
	}
	for _, name := range b.cfg.workloads {
		w := workloadByName(name)
		b.cfg.logf("%s: warming %s for %v", t.name, w.name, d)
		if st := b.runCellFor(t, w, warmSessions, d, fmt.Sprintf("%s/warm-%s", b.root, w.name)); st.err != nil {
			b.cfg.logf("%s: warming %s: %v", t.name, w.name, st.err)
		}
	}
}

func (b *bench) teardownTarget(t *target) {
	if !t.data || t.down != nil {
		return
	}
	conns, err := connectAll(t.members, roundRobin(4, len(t.members)))
	if err != nil {
		return
	}
	defer closeAll(conns)
	bulkDelete(conns, b.dataPaths)
	bulkDelete(conns, b.dataDirs)
	_ = conns[0].Delete(b.root+"/data", -1)
	_ = conns[0].Delete(b.root, -1)
}

func (b *bench) prepareData(conns []*zk.Conn) error {
	ops := []any{&zk.CreateRequest{Path: b.root + "/data", Acl: worldACL}}
	for _, d := range b.dataDirs {
		ops = append(ops, &zk.CreateRequest{Path: d, Acl: worldACL})
	}
	// The parents must exist before the batches that fill them run in parallel.
	if _, err := conns[0].Multi(ops...); err != nil {
		return fmt.Errorf("prepare data: %w", err)
	}
	ops = ops[:0]
	for _, p := range b.dataPaths {
		ops = append(ops, &zk.CreateRequest{Path: p, Data: b.value, Acl: worldACL})
	}
	if err := bulk(conns, ops); err != nil {
		return fmt.Errorf("prepare data: %w", err)
	}
	return nil
}

// runCell opens the sessions, lets the workload prepare, drives it, cleans up, and
// closes the sessions; preparation, cleanup and connecting are never timed.
func (b *bench) runCell(t *target, w *workload, sessions int) stats {
	return b.runCellFor(t, w, sessions, b.cfg.duration, fmt.Sprintf("%s/%s-%d", b.root, w.name, sessions))
}

// runCellFor is runCell with the timed part's length and the cell's base node given.
func (b *bench) runCellFor(t *target, w *workload, sessions int, duration time.Duration, base string) stats {
	if t.down != nil {
		return stats{err: fmt.Errorf("skipped: %w", t.down)}
	}
	members := byRole(t.members)
	if b.cfg.onLeader {
		members = members[len(members)-1:]
	}
	at := roundRobin(sessions, len(members))
	if w.place != nil {
		at = w.place(sessions, len(members))
	}
	conns, err := connectAll(members, at)
	if err != nil {
		// Loopback connections do not fail for a while and then work again: the
		// server is gone, and waiting for it in every later cell would only burn time.
		t.down = err
		return stats{err: err}
	}
	defer closeAll(conns)
	c := &cell{
		b:        b,
		t:        t,
		conns:    conns,
		base:     base,
		duration: duration,
	}
	if _, err := conns[0].Create(c.base, b.value, 0, worldACL); err != nil {
		return stats{err: fmt.Errorf("create %s: %w", c.base, err)}
	}
	if d := b.settle(t); d > 2*settleWindow {
		b.cfg.logf("%s: waited %v for the other targets to go quiet", t.name, d.Round(time.Millisecond))
	}
	st := w.run(c)
	if w.cleanup != nil {
		w.cleanup(c)
	}
	// Children left behind (ephemerals of sessions not yet closed) make this fail;
	// the base is then left in place, which costs nothing but a few bytes.
	_ = conns[0].Delete(c.base, -1)
	return st
}

// worker is the state of one load goroutine: which session it uses, its own random
// source and its own counters.
type worker struct {
	c    *cell
	id   int
	conn *zk.Conn
	rng  *rand.Rand
	n    int // nodes used so far, for workloads that name nodes after it
	// limit is the number of nodes prepared for this worker (delete workload).
	limit int
	// phases, when set, splits a timed session op's time (runSession).
	phases *sessionPhases
}

// opFunc is one timed operation of a worker.
type opFunc func(w *worker) error

// measuredOp is an operation that measures itself and returns the latency to record, for
// workloads whose figure is not the length of a call (visibility: the lag behind a reply).
type measuredOp func(w *worker) (time.Duration, error)

// drive runs depth workers per session, each calling op back to back until the duration
// is over (or op reports errExhausted), and times every call.
func (c *cell) drive(op opFunc) stats { return c.driveWorkers(c.newWorkers(len(c.conns)), op) }

func (c *cell) driveWorkers(ws []*worker, op opFunc) stats {
	return c.driveMeasured(ws, func(w *worker) (time.Duration, error) {
		t0 := time.Now()
		err := op(w)
		return time.Since(t0), err
	})
}

func (c *cell) newWorkers(sessions int) []*worker {
	depth := c.b.cfg.depth
	ws := make([]*worker, sessions*depth)
	for i := range ws {
		ws[i] = &worker{c: c, id: i, conn: c.conns[i%sessions], rng: rand.New(rand.NewPCG(uint64(i), 0x5eed))}
	}
	return ws
}

// driveMeasured runs the workers, each calling op back to back until the duration is over
// (or op reports errExhausted), and records the latency every successful op returns.
func (c *cell) driveMeasured(ws []*worker, op measuredOp) stats {
	type outcome struct {
		hist      histogram
		ops, errs uint64
		lastErr   error
		exhausted bool
		aborted   bool
	}
	var (
		stop atomic.Bool
		wg   sync.WaitGroup
	)
	outs := make([]outcome, len(ws))
	cpu0 := c.serverCPU()
	start := time.Now()
	deadline := start.Add(c.duration)
	var exhaustedAt atomic.Int64
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outs[i]
			consecutive := 0
			for !stop.Load() {
				if !time.Now().Before(deadline) {
					return
				}
				d, err := op(w)
				switch {
				case err == nil:
					o.ops++
					consecutive = 0
					o.hist.record(d)
				case errors.Is(err, errExhausted):
					o.exhausted = true
					exhaustedAt.CompareAndSwap(0, int64(time.Since(start)))
					stop.Store(true)
				default:
					o.errs++
					o.lastErr = err
					if consecutive++; consecutive >= maxConsecErrors {
						o.aborted = true
						stop.Store(true)
					}
				}
			}
		}()
	}
	wg.Wait()
	total := stats{elapsed: time.Since(start), cpu: -1}
	if cpu1 := c.serverCPU(); cpu0 >= 0 && cpu1 >= 0 {
		total.cpu = cpu1 - cpu0
	}
	var lastErr error
	for i := range outs {
		o := &outs[i]
		total.hist.merge(&o.hist)
		total.ops += o.ops
		total.errs += o.errs
		if o.lastErr != nil {
			lastErr = o.lastErr
		}
		if o.aborted && total.err == nil {
			total.err = fmt.Errorf("%d errors in a row: %w", maxConsecErrors, o.lastErr)
		}
	}
	if at := exhaustedAt.Load(); at != 0 {
		total.note = fmt.Sprintf("ran out of prepared nodes after %.2fs", time.Duration(at).Seconds())
	}
	if total.errs > 0 {
		total.note = joinNote(total.note, fmt.Sprintf("%d errors, last: %v", total.errs, lastErr))
	}
	return total
}

// serverCPU is the CPU seconds the target's processes have used so far, -1 if unknown.
func (c *cell) serverCPU() float64 {
	if len(c.t.pids) == 0 {
		return -1
	}
	return cpuSeconds(c.t.pids...)
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// roundRobin places n sessions on the members in turn, session i on member i mod members,
// as clients' shuffled connect strings spread them over an ensemble.
func roundRobin(n, members int) []int {
	at := make([]int, n)
	for i := range at {
		at[i] = i % members
	}
	return at
}

// connectAll opens one session per entry of at in parallel, session i pinned to the member
// members[at[i]] (a one-address connect string, so it never moves), and waits until each
// has its session.
func connectAll(members []string, at []int) ([]*zk.Conn, error) {
	conns, failed, first := inParallel(len(at), 32, func(i int) (*zk.Conn, error) { return connect(members[at[i]]) })
	if failed > 0 {
		closeAll(conns)
		return nil, fmt.Errorf("%d of %d sessions failed, first: %w", failed, len(at), first)
	}
	return conns, nil
}

// inParallel calls f(i) for every i below n, width calls at a time, and returns what
// they gave in order (the zero value where one failed), how many failed and the first
// failure.
func inParallel[C any](n, width int, f func(i int) (C, error)) (out []C, failed int, first error) {
	out = make([]C, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, width)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i], errs[i] = f(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			if failed++; first == nil {
				first = err
			}
		}
	}
	return out, failed, first
}

func connect(addr string) (*zk.Conn, error) { return connectWith(addr, sessionTimeout) }

// connectWith opens a session asking for timeout and waits until it has it.
func connectWith(addr string, timeout time.Duration) (*zk.Conn, error) {
	conn, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogger(quietLogger{}), zk.WithLogInfo(false), zk.WithDialer(dial))
	if err != nil {
		return nil, err
	}
	wait := time.NewTimer(connectTimeout)
	defer wait.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("connect %s: connection closed", addr)
			}
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
			if ev.State == zk.StateAuthFailed || ev.State == zk.StateExpired {
				conn.Close()
				return nil, fmt.Errorf("connect %s: %v", addr, ev.State)
			}
		case <-wait.C:
			conn.Close()
			return nil, fmt.Errorf("connect %s: no session after %v", addr, connectTimeout)
		}
	}
}

// dial gives a TCP connect up to connectTimeout, as the Java client gives it its session
// timeout over the number of servers. go-zookeeper's own dial gives up after a second and
// then waits another before it dials again. When the 256 workers of a session cell dial
// at once, a dialing goroutine of this program can wait longer than that for a core of
// its own while the kernel has long since connected it: with that dial, hundreds of
// connects a cell took two seconds or more against zkraft with no SYN sent twice (the
// kernel's TCPSynRetrans counted only ZooKeeper's overflowing accept queue), and the
// cell measured this program's scheduler.
func dial(network, addr string, _ time.Duration) (net.Conn, error) {
	return net.DialTimeout(network, addr, connectTimeout)
}

func closeAll(conns []*zk.Conn) {
	var wg sync.WaitGroup
	for _, c := range conns {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// batchFor is how many creates of value fit in one untimed multi: bulkBatch, or fewer
// when their data would pass bulkBytes (one at least).
func batchFor(value []byte) int {
	return max(1, min(bulkBatch, bulkBytes/max(len(value), 1)))
}

// bulk applies ops in multis of up to bulkBatch (fewer when their data passes bulkBytes), spread over the sessions, a few in flight per
// session. It is for untimed preparation and cleanup only.
func bulk(conns []*zk.Conn, ops []any) error {
	var (
		mu     sync.Mutex
		failed int
		first  error
	)
	batches := bulkWith(conns, ops, func(conn *zk.Conn, batch []any) {
		if _, err := conn.Multi(batch...); err != nil {
			mu.Lock()
			defer mu.Unlock()
			if failed++; first == nil {
				first = err
			}
		}
	})
	if failed > 0 {
		return fmt.Errorf("%d of %d multis failed, first: %w", failed, batches, first)
	}
	return nil
}

// bulkWith cuts ops into batches as bulk says and calls apply for each, from a few
// goroutines per session. It returns the number of batches.
func bulkWith(conns []*zk.Conn, ops []any, apply func(conn *zk.Conn, batch []any)) int {
	var batches [][]any
	for len(ops) > 0 {
		n, size := 0, 0
		for n < min(bulkBatch, len(ops)) {
			if c, ok := ops[n].(*zk.CreateRequest); ok {
				size += len(c.Data)
			}
			if n > 0 && size > bulkBytes {
				break
			}
			n++
		}
		batches = append(batches, ops[:n])
		ops = ops[n:]
	}
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for i := range min(len(conns)*4, 64, len(batches)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn := conns[i%len(conns)]
			for {
				j := int(next.Add(1) - 1)
				if j >= len(batches) {
					return
				}
				apply(conn, batches[j])
			}
		}()
	}
	wg.Wait()
	return len(batches)
}
