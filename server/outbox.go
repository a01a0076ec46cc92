package server

import "sync"

// maxQueuedBytes bounds what may wait for one client's socket. A client that lets more
// pile up (it does not read its replies and notifications) is disconnected: the state
// machine never waits for a socket. The bound is on what already waits when a frame is
// queued, so one reply larger than it (a multiRead or getChildren of tens of MB, which
// ZooKeeper sends to a client whose jute.maxbuffer allows it) is still queued and sent,
// behind a few small ones too.
const maxQueuedBytes = 32 << 20

// outbox is a connection's queue of encoded frames for its writer. push never blocks;
// the writer takes everything queued at once and writes it with one writev, so pipelined
// replies and notifications share system calls. An empty outbox holds no frames, only
// the small slice the writer gave back for the next pushes (recycle). The writer is a
// goroutine that runs only while there is something to write: a push to an idle outbox
// starts it, and it ends once it finds the outbox empty (idle), so an idle connection
// holds no writer's stack.
type outbox struct {
	mu      sync.Mutex
	frames  []*[]byte
	spare   []*[]byte // given back by the writer, empty; the next take's queue
	bytes   int
	closing bool        // write what is queued, then close
	why     closeReason // why it closes then (the first reason given)
	held    bool        // the reader writes what it queues itself (holdWake)
	writing bool        // a writer runs (or stopped for good: the connection is done)
	writer  func() bool // writes what is queued; false: the connection is done
}

// maxSpare is the longest slice of frames a connection keeps for reuse: the outbox's
// queue, and the writer's net.Buffers.
const maxSpare = 16

func newOutbox(writer func() bool) *outbox { return &outbox{writer: writer} }

// push queues f; false means the client is too far behind and must be dropped:
// maxQueuedBytes or more already waits for it.
func (o *outbox) push(f *[]byte) bool {
	o.mu.Lock()
	if o.bytes >= maxQueuedBytes {
		o.mu.Unlock()
		return false
	}
	o.frames = append(o.frames, f)
	o.bytes += len(*f)
	held := o.held
	o.mu.Unlock()
	if !held {
		o.signal()
	}
	return true
}

// holdWake makes pushes queue without waking the writer, until releaseWake: the
// connection's reader, running a read itself, writes the reply it queues (and whatever
// else was queued meanwhile) on its own, with no hand-off to the writer.
func (o *outbox) holdWake() {
	o.mu.Lock()
	o.held = true
	o.mu.Unlock()
}

// releaseWake ends holdWake; pushes wake the writer again. It reports how many bytes
// are queued.
func (o *outbox) releaseWake() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held = false
	return o.bytes
}

// closeAfter asks the writer to close the connection once what is queued is written,
// counted under why (or under the reason an earlier call gave).
func (o *outbox) closeAfter(why closeReason) {
	o.mu.Lock()
	if !o.closing {
		o.closing, o.why = true, why
	}
	o.mu.Unlock()
	o.signal()
}

// signal makes sure a writer runs: one that runs finds what was queued before it looks
// whether the outbox is empty.
func (o *outbox) signal() {
	o.mu.Lock()
	start := !o.writing
	o.writing = true
	o.mu.Unlock()
	if start {
		go o.write()
	}
}

// write is the writer: it writes until the outbox is empty or the connection is done.
func (o *outbox) write() {
	for o.writer() {
		o.mu.Lock()
		if len(o.frames) == 0 && !o.closing {
			o.writing = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
	}
}

// take hands the writer everything queued, whether to close after writing it, and why.
func (o *outbox) take() ([]*[]byte, bool, closeReason) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fs := o.frames
	o.frames, o.spare, o.bytes = o.spare, nil, 0
	return fs, o.closing, o.why
}

// recycle takes back a slice take returned, once its frames are written, to queue later
// frames in; a long one is left to the collector.
func (o *outbox) recycle(fs []*[]byte) {
	if cap(fs) > maxSpare {
		return
	}
	clear(fs)
	o.mu.Lock()
	o.spare = fs[:0]
	o.mu.Unlock()
}
