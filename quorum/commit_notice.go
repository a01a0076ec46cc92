package quorum

import (
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// Commit notices: how a member learns of a commit one network hop after the leader does,
// as a ZooKeeper follower learns it from the leader's COMMIT. The package doc says why
// it is safe. Every member that applies a command records its (index, term) (committed,
// below); whoever has a peer stream open to it (the followers and observers of a
// leader) gets that point as a commit notice on the stream (peer_wire.go). A member that
// is told (i, t) applies its own log up to i ahead of raft, if the entry it holds at i has
// term t (catchUp), counting the entries raft is still writing (noticedLogs); raft's own
// apply of those entries later returns their results without applying them again
// (FSM.Apply).

// commitPoint is a committed entry: its Raft index and term.
type commitPoint struct{ index, term uint64 }

// earlyResult is the result of an entry applied on a commit notice, kept until raft's
// Apply of the same entry asks for it.
type earlyResult struct {
	index uint64
	res   *Result
}

// earlyResult returns the result of the entry at index if it was applied early (else
// nil), and drops the results of the entries before it; under applyMu.
func (f *FSM) earlyResult(index uint64) *Result {
	for len(f.early) > 0 && f.early[0].index < index {
		f.early = f.early[1:]
	}
	if len(f.early) == 0 || f.early[0].index != index {
		return nil
	}
	r := f.early[0].res
	f.early = f.early[1:]
	return r
}

// Committed is the last command applied here, which is committed: its index and term.
func (f *FSM) Committed() (index, term uint64) {
	if p := f.committed.Load(); p != nil {
		return p.index, p.term
	}
	return 0, 0
}

// EarlyApplied counts the commands this member applied on commit notices, ahead of raft.
func (f *FSM) EarlyApplied() uint64 { return f.earlyApplied.Load() }

// DurableApplied counts the commands this member applied on durable notices
// (durable_notice.go), which EarlyApplied counts too.
func (f *FSM) DurableApplied() uint64 { return f.durableApplied.Load() }

// applyCommitted applies the entries of logs up to index, ahead of raft, if the entry
// logs holds at index has the given term (so it and every entry before it are the
// committed ones). It reports false when that entry is not there yet, or not with that
// term: a later store of entries tries again. The entries go to applyRun in runs of
// up to applyHold, read from the log as they are applied.
//
// count, if not nil, counts the commands applied; valid, if not nil, is asked once the
// entry at index is read, and nothing is applied unless it says yes.
func (f *FSM) applyCommitted(logs logReader, index, term uint64, count *atomic.Uint64, valid func() bool) bool {
	if index <= f.appliedIndex.Load() {
		return true
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	// A new raft.Log for every read: one read from the log cache shares the cached
	// entry's bytes, and a later read into the same raft.Log would write over them.
	noticed := new(raft.Log)
	if err := logs.GetLog(index, noticed); err != nil || noticed.Term != term {
		return false
	}
	if valid != nil && !valid() {
		return false
	}
	from := f.appliedIndex.Load() + 1
	run := make([]*raft.Log, 0, min(index+1-from, applyHold))
	for i := from; i <= index; i++ {
		l := noticed
		if i != index {
			l = new(raft.Log)
			if err := logs.GetLog(i, l); err != nil {
				// Compacted under a snapshot being installed: raft applies what follows.
				f.applyEarly(run, count)
				return false
			}
		}
		if run = append(run, l); len(run) == applyHold || i == index {
			f.applyEarly(run, count)
			run = run[:0]
		}
	}
	return true
}

// applyEarly applies a run of entries ahead of raft and keeps the commands' results for
// raft's apply of them, counting the commands in count too; under applyMu.
func (f *FSM) applyEarly(run []*raft.Log, count *atomic.Uint64) {
	if len(run) == 0 {
		return
	}
	out := make([]interface{}, len(run))
	f.applyRun(run, out)
	var n uint64
	for i, r := range out {
		if r != nil {
			f.early = append(f.early, earlyResult{index: run[i].Index, res: r.(*Result)})
			n++
		}
	}
	f.earlyApplied.Add(n)
	if count != nil {
		count.Add(n)
	}
}

// catchUp is a member's side of commit notices: it keeps the newest notice and applies
// up to it on its own goroutine, once the member's log holds the entry it names. The
// notice arrives on the peer stream's reader; the entries arrive through raft's
// AppendEntries, in either order, so both wake it.
type catchUp struct {
	fsm  *FSM
	logs logReader
	// durableLogs is the log as stored (durable on a follower), read for durable
	// notices; term is this member's current term and lastStored its last stored
	// index (durable_notice.go).
	durableLogs logReader
	term        func() uint64
	lastStored  func() uint64
	// recv is what this member received and raft has not stored yet (received.go).
	recv *received

	mu      sync.Mutex
	want    commitPoint
	durable commitPoint // the newest durable notice
	// wantIndex is want.index and durableIndex durable.index, read without the lock.
	wantIndex    atomic.Uint64
	durableIndex atomic.Uint64
	// firstHeard is the index of the first notice, commit or durable, this member got
	// since it started (Node.caughtUpSinceStart); 0 before.
	firstHeard atomic.Uint64
	// applied, if set, is told after each notice is acted on (Node.checkServing).
	applied func()
	wake    chan struct{}
}

// newCatchUp makes a member's catch-up; logs is its view for commit notices, stored
// the log as stored, term raft's current term and lastStored the stored log's last
// index. Its run of received entries is empty until the node puts its raft streams' in.
func newCatchUp(fsm *FSM, logs, stored logReader, term, lastStored func() uint64) *catchUp {
	return &catchUp{fsm: fsm, logs: logs, durableLogs: stored, term: term, lastStored: lastStored, recv: &received{},
		wake: make(chan struct{}, 1)}
}

// notice takes a commit notice from the stream to the leader, on the stream's reader:
// it applies at once if the entry is here (one goroutine hop less than the loop), and
// leaves it to the loop otherwise.
func (c *catchUp) notice(p commitPoint) {
	c.firstHeard.CompareAndSwap(0, p.index)
	c.mu.Lock()
	if p.index > c.want.index {
		c.want = p
		c.wantIndex.Store(p.index)
	}
	c.mu.Unlock()
	if !c.apply(p) {
		c.signal()
	}
	c.recv.dropApplied(c.fsm.appliedIndex.Load())
	c.told()
}

// told tells applied, if set, that a notice was acted on.
func (c *catchUp) told() {
	if c.applied != nil {
		c.applied()
	}
}

// apply applies up to the noticed point p from this member's log, or from what it
// received, whichever holds it.
func (c *catchUp) apply(p commitPoint) bool {
	return c.fsm.applyCommitted(c.logs, p.index, p.term, nil, nil) || c.fsm.applyReceived(c.recv, p)
}

// arrived is told the last index of every batch raft stores, as raft starts writing it,
// and of every batch received (received.add); it wakes the loop once the noticed entry
// may be there.
func (c *catchUp) arrived(last uint64) {
	if w := c.wantIndex.Load(); last >= w && w > c.fsm.appliedIndex.Load() {
		c.signal()
	}
}

func (c *catchUp) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *catchUp) run(done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		p := c.want
		c.mu.Unlock()
		c.apply(p)
		c.applyDurable()
		c.told()
	}
}

// logReader is what catchUp reads the noticed entries from.
type logReader interface {
	GetLog(index uint64, log *raft.Log) error
}

// noticedLogs is the log store raft writes through. It tells catchUp of every batch as
// raft starts writing it, and catchUp reads that batch before the write (and its fsync)
// returns: a noticed entry is durable on a quorum already, so this member need not wait
// for its own disk to apply it, as a ZooKeeper follower applies a COMMIT without waiting
// for its own log write. Waiting made a member that was not in the quorum of a commit
// serve reads without it for as long as its fsync took, after the writer's reply.
//
// It is also where the leader's own batches are stored deferred (leaderLog).
type noticedLogs struct {
	*recentLogs
	arrived func(last uint64)
	stored  func()                      // a batch was stored durably (not deferred)
	writing atomic.Pointer[[]*raft.Log] // the batch being stored, nil between batches
	lead    *leaderLog
	// followerStored, if set, is told of each batch stored while this member follows.
	followerStored func(es []*raft.Log)
}

func (l *noticedLogs) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs is called from raft's one goroutine, so there is one batch at a time. On a
// follower raft has checked the batch against the log (the previous entry's term) and
// deleted the entries it replaces, so the log up to the batch and the batch are the
// leader's log; a leader's batch holds entries of its own term, which no notice it got
// as a follower names.
func (l *noticedLogs) StoreLogs(es []*raft.Log) error {
	if len(es) == 0 {
		return l.recentLogs.StoreLogs(es)
	}
	if l.lead.deferrable(es) {
		if err := l.lead.store.StoreLogsDeferred(es); err != nil {
			return err
		}
		l.recentLogs.cache(es)
		l.lead.storedDeferred(es)
		return nil
	}
	if l.followerStored != nil {
		if r := l.lead.raft.Load(); r != nil && r.State() != raft.Leader {
			l.followerStored(es)
		}
	}
	l.writing.Store(&es)
	defer l.writing.Store(nil)
	l.arrived(es[len(es)-1].Index)
	if err := l.recentLogs.StoreLogs(es); err != nil {
		return err
	}
	if l.stored != nil {
		l.stored()
	}
	return nil
}

// writingOrStored is catchUp's view of the log: the batch raft is writing, then what
// it stored. Raft itself reads only what it stored, through noticedLogs.
type writingOrStored struct{ *noticedLogs }

func (v writingOrStored) GetLog(index uint64, out *raft.Log) error {
	if p := v.writing.Load(); p != nil {
		es := *p
		if first := es[0].Index; index >= first && index-first < uint64(len(es)) {
			*out = *es[index-first]
			return nil
		}
	}
	return v.recentLogs.GetLog(index, out)
}

// commitSubs wakes the writers of the peer streams that carry commit notices each time a
// command is applied. The list is replaced, never changed in place, so notify takes no
// lock on the apply path.
type commitSubs struct {
	mu   sync.Mutex
	subs atomic.Pointer[[]chan struct{}]
}

func (c *commitSubs) subscribe() chan struct{} {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	var next []chan struct{}
	if p := c.subs.Load(); p != nil {
		next = append(next, *p...)
	}
	next = append(next, ch)
	c.subs.Store(&next)
	return ch
}

func (c *commitSubs) unsubscribe(ch chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next []chan struct{}
	if p := c.subs.Load(); p != nil {
		for _, s := range *p {
			if s != ch {
				next = append(next, s)
			}
		}
	}
	c.subs.Store(&next)
}

func (c *commitSubs) notify() {
	p := c.subs.Load()
	if p == nil {
		return
	}
	for _, ch := range *p {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
