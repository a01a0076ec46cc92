package quorum

import (
	"sync"

	"github.com/hashicorp/raft"
)

// One waiter for the raft futures of the writes this member proposes as leader. A
// connection's responder used to wait on raft's future itself: raft's Error selects on
// the future's channel and on raft's one shutdown channel, and the responder is a stage
// goroutine that starts afresh for each burst (server/stage.go), so its small stack grew
// inside that select, once per burst. At 256 sessions of setData, standalone, 7% of the
// server's CPU was runtime.sellock, nearly all of it runtime.newstack copying those
// stacks (docs/benchmarks.md, thirty-seventh session). So a connection waits on a
// future of its own (waitedFuture: one channel receive), and one goroutine waits on
// raft's futures in the order they were queued (about the order of their indexes, in
// which raft answers them) and completes each. It exists only while writes wait, as a
// connection's stages do, so an idle member holds none and nothing needs stopping: once
// raft shuts down, every future it holds answers at once (ErrRaftShutdown).

// applyWaitKeep is the longest queue the waiter keeps for reuse once it runs dry.
const applyWaitKeep = 1024

// applyWaiter waits on raft's futures in order and completes their waitedFutures.
type applyWaiter struct {
	mu      sync.Mutex
	queue   []*waitedFuture
	head    int  // queue[head:] waits
	running bool // a goroutine drains the queue
}

// waitedFuture is a raft future whose outcome applyWaiter delivers.
type waitedFuture struct {
	f    raft.ApplyFuture
	done chan struct{}
	err  error // set before done is closed
}

func (w *waitedFuture) Error() error { <-w.done; return w.err }

// Response is raft's, read once raft's Error has returned (applyWaiter's wait).
func (w *waitedFuture) Response() interface{} { <-w.done; return w.f.Response() }

// wait returns a future that completes when f does, waited on by the waiter's goroutine.
func (a *applyWaiter) wait(f raft.ApplyFuture) Future {
	w := &waitedFuture{f: f, done: make(chan struct{})}
	a.mu.Lock()
	if len(a.queue) == cap(a.queue) && a.head > 0 {
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
		if a.head == len(a.queue) {
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
		a.mu.Unlock()
		w.err = w.f.Error()
		close(w.done)
	}
}
