package quorum

import (
	"sync"

	"github.com/hashicorp/raft"
)

// One waiter for the raft futures of the writes this member proposes as leader (a
// client's, and the member's own: session closes, moves, syncs, container deletes).
// A connection's responder used to wait on raft's future itself, in the select of raft's
// Error, and the responder is a stage goroutine that starts afresh for each burst
// (server/stage.go), so its small stack grew inside that select, once per burst: at 256
// sessions of setData, standalone, 7% of the server's CPU was runtime.sellock, nearly
// all of it runtime.newstack copying those stacks (docs/benchmarks.md, thirty-seventh
// session). So a connection waits on a future of its own (waitedFuture: one channel
// receive), and one goroutine waits on raft's futures in the order they were queued and
// completes each. That is about the order of their indexes, in which raft answers them;
// a refusal (not the leader) is answered at once, so it may wait behind writes raft is
// still applying. The goroutine exists only while writes wait, as a connection's stages
// do, so an idle member holds none. Raft never answers a future still in its apply
// queue when it shuts down, so Node.Close fails whatever still waits (stop).

// applyWaitKeep is the longest queue the waiter keeps for reuse once it runs dry.
const applyWaitKeep = 1024

// applyWaiter waits on raft's futures in order and completes their waitedFutures.
type applyWaiter struct {
	mu      sync.Mutex
	queue   []*waitedFuture
	head    int           // queue[head:] waits
	current *waitedFuture // taken by the goroutine, its raft future not answered yet
	running bool          // a goroutine drains the queue
	stopped error         // set by stop: nothing more is waited on
}

// waitedFuture is a raft future whose outcome applyWaiter delivers.
type waitedFuture struct {
	f    raft.ApplyFuture
	done chan struct{}
	once sync.Once
	// err and answered (raft answered f, so its Response is set) are set before done
	// is closed.
	err      error
	answered bool
}

func (w *waitedFuture) Error() error { <-w.done; return w.err }

func (w *waitedFuture) doneCh() <-chan struct{} { return w.done }

// Response is raft's, read once raft's Error has returned (the waiter's wait); nil if
// the future failed without raft's answer (stop).
func (w *waitedFuture) Response() interface{} {
	<-w.done
	if !w.answered {
		return nil
	}
	return w.f.Response()
}

// finish completes w with err, once.
func (w *waitedFuture) finish(err error, answered bool) {
	w.once.Do(func() {
		w.err, w.answered = err, answered
		close(w.done)
	})
}

// wait returns a future that completes when f does, waited on by the waiter's goroutine.
func (a *applyWaiter) wait(f raft.ApplyFuture) Future {
	w := &waitedFuture{f: f, done: make(chan struct{})}
	a.mu.Lock()
	if a.stopped != nil {
		a.mu.Unlock()
		return failedFuture{a.stopped}
	}
	if len(a.queue) == cap(a.queue) && a.head >= len(a.queue)/2 {
		// Reuse what was drained before growing; only once half is drained, so a steady
		// backlog does not copy the whole queue for each write.
		n := copy(a.queue, a.queue[a.head:])
		clear(a.queue[n:])
		a.queue, a.head = a.queue[:n], 0
	}
	a.queue = append(a.queue, w)
	start := !a.running
	a.running = true
	a.mu.Unlock()
	if start {
		go a.drain()
	}
	return w
}

// drain completes the queued futures in order until none waits.
func (a *applyWaiter) drain() {
	for {
		a.mu.Lock()
		a.current = nil
		if a.head == len(a.queue) || a.stopped != nil { // (stop failed what was left)
			a.queue, a.head = a.queue[:0], 0
			if cap(a.queue) > applyWaitKeep {
				a.queue = nil
			}
			a.running = false
			a.mu.Unlock()
			return
		}
		w := a.queue[a.head]
		a.queue[a.head] = nil
		a.head++
		a.current = w
		a.mu.Unlock()
		err := w.f.Error()
		w.finish(err, true)
	}
}

// stop fails every future still waiting with err, and every later one, once raft has
// shut down: raft answers none of those left in its apply queue. The goroutine, if one
// waits on such a future, stays blocked; the futures are answered all the same.
func (a *applyWaiter) stop(err error) {
	a.mu.Lock()
	a.stopped = err
	left := append([]*waitedFuture{a.current}, a.queue[a.head:]...)
	a.mu.Unlock()
	for _, w := range left {
		if w != nil {
			w.finish(err, false)
		}
	}
}
