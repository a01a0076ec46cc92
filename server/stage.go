package server

import "sync"

// stage is one stage of a connection's request pipeline (the processor, the responder):
// a queue of requests run one at a time, in the order queued, on a goroutine that exists
// only while the stage has work. The first request queued to an idle stage starts the
// goroutine; it ends when the queue is empty. So an idle connection holds no goroutine
// stack and no buffer for these stages: a Go channel's buffer is allocated whole, and
// two of MaxOutstanding slots with two parked goroutines were most of the 32 KiB a
// connection kept (docs/benchmarks.md, thirty-third session).
type stage struct {
	mu      sync.Mutex
	queue   []*pending
	head    int  // queue[head:] waits
	running bool // a goroutine runs the stage (or it stopped: nothing more runs)
	max     int  // put waits while this many wait
	room    chan struct{}
	done    <-chan struct{} // the connection's: queued requests are dropped once it closes
	// run runs one request; false ends the stage for good (the connection is done).
	run func(*pending) bool
}

// stageKeep is the longest queue a stage keeps for reuse once it runs dry.
const stageKeep = 16

// newStage returns an idle stage whose queue holds at most limit requests, and at least
// one (a MaxOutstanding of 0 made an unbuffered channel, a hand-off, before stages).
func newStage(limit int, done <-chan struct{}, run func(*pending) bool) *stage {
	return &stage{max: max(limit, 1), room: make(chan struct{}, 1), done: done, run: run}
}

// put queues p, waiting while max requests wait, and starts the stage's goroutine if none
// runs; false means the connection closed first.
func (s *stage) put(p *pending) bool {
	s.mu.Lock()
	for len(s.queue)-s.head >= s.max {
		s.mu.Unlock()
		select {
		case <-s.room:
		case <-s.done:
			return false
		}
		s.mu.Lock()
	}
	if len(s.queue) == cap(s.queue) && s.head >= len(s.queue)/2 {
		// Reuse what the stage has run through before growing the queue; only once half
		// is run through, so a steady backlog does not copy the whole queue per request.
		n := copy(s.queue, s.queue[s.head:])
		clear(s.queue[n:])
		s.queue, s.head = s.queue[:n], 0
	}
	s.queue = append(s.queue, p)
	start := !s.running
	s.running = true
	s.mu.Unlock()
	if start {
		go s.drain()
	}
	return true
}

// drain runs the queued requests until none is left, the connection closes, or run
// reports it done; in the last two cases running stays set, so nothing more runs.
func (s *stage) drain() {
	for {
		select {
		case <-s.done:
			return
		default:
		}
		s.mu.Lock()
		if s.head == len(s.queue) {
			// (Each entry was cleared when it was taken.)
			s.queue, s.head = s.queue[:0], 0
			if cap(s.queue) > stageKeep {
				s.queue = nil
			}
			s.running = false
			s.mu.Unlock()
			return
		}
		p := s.queue[s.head]
		s.queue[s.head] = nil
		s.head++
		s.mu.Unlock()
		select {
		case s.room <- struct{}{}:
		default:
		}
		if !s.run(p) {
			return
		}
	}
}
