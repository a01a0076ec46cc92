package quorum

import (
	"sync"
	"sync/atomic"
	"time"
)

// zxidWaits are callers waiting until a zxid, or every entry up to an index, is applied
// here (FSM.WaitApplied, FSM.waitThrough). The apply path looks at it only when someone
// waits: it stores lastZxid or through, then reads n; a waiter adds itself (n), then
// reads what it waits on, so one of the two always sees the other.
type zxidWaits struct {
	n  atomic.Int32
	mu sync.Mutex
	w  []zxidWait
}

type zxidWait struct {
	zxid int64
	ch   chan struct{}
}

func (z *zxidWaits) add(zxid int64) chan struct{} {
	ch := make(chan struct{})
	z.mu.Lock()
	z.w = append(z.w, zxidWait{zxid: zxid, ch: ch})
	z.n.Store(int32(len(z.w)))
	z.mu.Unlock()
	return ch
}

// release wakes the waits satisfied by zxid having been applied.
func (z *zxidWaits) release(zxid int64) {
	if z.n.Load() == 0 {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	kept := z.w[:0]
	for _, w := range z.w {
		if w.zxid <= zxid {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	clear(z.w[len(kept):])
	z.w = kept
	z.n.Store(int32(len(kept)))
}

func (z *zxidWaits) remove(ch chan struct{}) {
	z.mu.Lock()
	defer z.mu.Unlock()
	for i, w := range z.w {
		if w.ch == ch {
			z.w = append(z.w[:i], z.w[i+1:]...)
			z.n.Store(int32(len(z.w)))
			return
		}
	}
}

// WaitApplied waits until this member has applied zxid, for at most timeout, and
// reports whether it has.
func (f *FSM) WaitApplied(zxid int64, timeout time.Duration) bool {
	return f.wait(zxid, timeout, func() bool { return f.LastZxid() >= zxid })
}

// waitThrough waits until every entry up to index is applied here (through), for at most
// timeout, and reports whether it is. Unlike WaitApplied it is satisfied by an index that
// is not a command's (a no-op, a configuration).
func (f *FSM) waitThrough(index uint64, timeout time.Duration) bool {
	return f.wait(int64(index), timeout, func() bool { return f.through.Load() >= index })
}

// wait waits, for at most timeout, until done says yes. The apply path wakes it once
// every command up to key is applied (release): after a hold of the tree's lock that
// applied a command at or above key, or at the end of a run that reaches key, which
// stores through first; done may still say no to a wake-up of the first kind, whose
// commands are in the tree all the same.
func (f *FSM) wait(key int64, timeout time.Duration, done func() bool) bool {
	if done() {
		return true
	}
	ch := f.zxidWaits.add(key)
	if done() { // applied while the wait was being added
		f.zxidWaits.remove(ch)
		return true
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-f.stopping: // the member stops (Node.StopWaiting)
	}
	f.zxidWaits.remove(ch)
	return done()
}
