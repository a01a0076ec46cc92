package quorum

import (
	"context"
	"sync"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// duties are what only the leader does: expire silent sessions and delete empty
// containers and expired TTL nodes. Each decision becomes a log entry that Apply
// re-checks, so a stale decision from a deposed leader is harmless.
type duties struct {
	n       *Node
	mu      sync.Mutex
	tracker *session.Tracker
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// add starts tracking a session whose createSession was applied.
func (d *duties) add(id int64, timeout int32) {
	if t := d.current(); t != nil {
		t.Add(id, time.Duration(timeout)*time.Millisecond)
	}
}

// current is the tracker while this member leads, else nil.
func (d *duties) current() *session.Tracker {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tracker
}

// touch refreshes a session heard from (here or on a follower). It never tracks one
// the leader does not hold: a follower's ping may name a session whose closeSession
// was applied since, and tracking it again would expire it once more, a timeout later.
func (d *duties) touch(id int64, timeout int32) {
	if t := d.current(); t != nil {
		t.Touch(id, time.Duration(timeout)*time.Millisecond)
	}
}

func (d *duties) forget(id int64) {
	if t := d.current(); t != nil {
		t.Remove(id)
	}
}

// start runs on gaining leadership, after a barrier: every known session gets a fresh
// timeout (so a failover never expires sessions whose pings went to the old leader).
// d.mu is held from before the table is read until the tracker is in place, and the
// apply path calls add and forget after the table changed, so each session created or
// closed meanwhile is either in the table read here or reaches the tracker after it.
func (d *duties) start() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tracker != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	t := session.NewTracker(session.SystemClock{}, d.n.cfg.TickTime)
	d.n.FSM.Read(func(_ *datatree.Tree, s *session.Table) {
		for _, ss := range s.All() {
			t.Add(ss.ID, time.Duration(ss.Timeout)*time.Millisecond)
		}
	})
	d.tracker = t
	d.wg.Add(3)
	go func() {
		defer d.wg.Done()
		if d.n.IsClustered() {
			d.membershipLoop(ctx)
		}
	}()
	go func() {
		defer d.wg.Done()
		t.Run(ctx, d.expire)
	}()
	go func() {
		defer d.wg.Done()
		d.cleanupLoop(ctx)
	}()
}

// reseed makes a running tracker hold exactly the sessions of the state, each with a
// full timeout: a leader's state was replaced (Node.RestoreState). A follower's tracker
// is nil and stays so.
func (d *duties) reseed() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.tracker == nil {
		return
	}
	d.n.FSM.Read(func(_ *datatree.Tree, s *session.Table) { d.tracker.ResetAll(s.All()) })
}

func (d *duties) stop() {
	d.mu.Lock()
	cancel := d.cancel
	d.tracker, d.cancel = nil, nil
	d.mu.Unlock()
	if cancel != nil {
		cancel()
		d.wg.Wait()
	}
}

func (d *duties) expire(ids []int64) {
	if d.n.raft.VerifyLeader().Error() != nil {
		d.retry(ids)
		return
	}
	// One line per sweep, with the count, not one per session.
	first := make([]string, 0, 5)
	for _, id := range ids {
		if len(first) < cap(first) {
			first = append(first, formatSession(id))
		}
		d.n.Propose(&Entry{Session: id, Op: jute.OpCloseSession})
	}
	if len(ids) > 0 {
		d.n.cfg.Logger.Info("sessions expired", "count", len(ids), "first", first)
		if f := d.n.cfg.Figures.SessionsExpired; f != nil {
			f(len(ids))
		}
	}
}

// retry tracks again, due a tick from now, the sessions of a sweep this member could not
// expire because it was not sure it leads: a touch no longer tracks a session the
// tracker has let go, so nothing else would. Sessions closed meanwhile are left out.
func (d *duties) retry(ids []int64) {
	var live []int64
	d.n.FSM.Read(func(_ *datatree.Tree, s *session.Table) {
		for _, id := range ids {
			if _, ok := s.Get(id); ok {
				live = append(live, id)
			}
		}
	})
	tick := int32(d.n.cfg.TickTime / time.Millisecond)
	for _, id := range live {
		d.add(id, tick)
	}
}

func (d *duties) cleanupLoop(ctx context.Context) {
	tick := time.NewTicker(d.n.cfg.ContainerCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var paths []string
		now := time.Now().UnixMilli()
		d.n.FSM.Read(func(t *datatree.Tree, _ *session.Table) { paths = t.CleanupCandidates(now) })
		// ZooKeeper's ContainerManager proposes one deletion per minute/maxPerMinute.
		var gap time.Duration
		if n := d.n.cfg.ContainerMaxPerMinute; n > 0 {
			gap = time.Minute / time.Duration(n)
		}
		var last Future
		for i, p := range paths {
			if i > 0 && gap > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(gap):
				}
			}
			// Stamped when proposed: a paced backlog may take minutes, and the entries of
			// the log keep their times in order.
			last = d.n.Propose(&Entry{Op: jute.OpDeleteContainer, Super: true, Time: time.Now().UnixMilli(), Req: &jute.DeleteRequest{Path: p, Version: -1}})
		}
		if last != nil {
			_ = last.Error()
		}
	}
}

func formatSession(id int64) string {
	const hex = "0123456789abcdef"
	b := []byte("0x0000000000000000")
	for i := 17; i >= 2; i-- {
		b[i] = hex[id&0xf]
		id = int64(uint64(id) >> 4)
	}
	return string(b)
}
