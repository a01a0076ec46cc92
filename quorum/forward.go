package quorum

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Future is a proposal on its way: Error waits until it is applied on this server (or
// has failed, outcome unknown); Response is then its *Result. raft.ApplyFuture is one.
type Future interface {
	Error() error
	Response() interface{}
}

// ErrNoLeader means a follower could not reach a leader for a forwarded proposal, or
// the stream it went on broke before it was applied here: its outcome is unknown.
var ErrNoLeader = errors.New("quorum: no leader reachable")

// ErrEntryTooLarge fails a proposal a follower cannot forward: its entry (the request
// with its caller's identities) is larger than a leader reads in one frame
// (maxForwardFrame). Only that proposal fails: sent, it would make the leader drop the
// stream and with it every other client's writes in flight on it.
var ErrEntryTooLarge = errors.New("quorum: entry too large to forward")

// errNotSent fails a proposal that never reached the leader whole: it was not appended.
var errNotSent = fmt.Errorf("%w: proposal not sent", ErrNoLeader)

// notAppended reports whether a proposal failed before it could be in the log.
func notAppended(err error) bool {
	return errors.Is(err, errNotSent) || errors.Is(err, raft.ErrNotLeader)
}

// failedFuture is a proposal that was never made.
type failedFuture struct{ err error }

func (f failedFuture) Error() error          { return f.err }
func (f failedFuture) Response() interface{} { return nil }

// waitKey names a forwarded proposal among this member's: (Entry.Conn, Entry.Seq).
type waitKey struct{ conn, seq uint64 }

// forwardWaits holds this member's forwarded proposals until they are applied here,
// refused, or their stream breaks. n (never below the true count) lets the apply path
// skip the lookup while none wait, as on a leader, whose clients write through raft.
type forwardWaits struct {
	m sync.Map // waitKey -> *forwardFuture
	n atomic.Int64
}

func (w *forwardWaits) put(k waitKey, f *forwardFuture) {
	if _, replaced := w.m.Swap(k, f); !replaced {
		w.n.Add(1)
	}
}

// drop removes f if it still waits under k.
func (w *forwardWaits) drop(k waitKey, f *forwardFuture) bool {
	if w.m.CompareAndDelete(k, f) {
		w.n.Add(-1)
		return true
	}
	return false
}

// take removes and returns the proposal waiting under k.
func (w *forwardWaits) take(k waitKey) (*forwardFuture, bool) {
	if w.n.Load() == 0 {
		return nil, false
	}
	f, ok := w.m.LoadAndDelete(k)
	if !ok {
		return nil, false
	}
	w.n.Add(-1)
	return f.(*forwardFuture), true
}

// onStream removes and returns the proposal waiting under k if it went on st (a
// refused write may be on its way again, under the same key, on another stream).
func (w *forwardWaits) onStream(k waitKey, st *peerStream) (*forwardFuture, bool) {
	f, ok := w.m.Load(k)
	if ok && f.(*forwardFuture).stream == st && w.drop(k, f.(*forwardFuture)) {
		return f.(*forwardFuture), true
	}
	return nil, false
}

// eachOnStream removes every proposal that went on st and passes it to fn.
func (w *forwardWaits) eachOnStream(st *peerStream, fn func(*forwardFuture)) {
	w.m.Range(func(k, v any) bool {
		if f := v.(*forwardFuture); f.stream == st && w.drop(k.(waitKey), f) {
			fn(f)
		}
		return true
	})
}

// forwardFuture is a proposal a follower forwarded to the leader. It completes when the
// entry is applied here (the FSM finds it by Origin, Conn and Seq), or when the leader
// refused it or the stream it went on broke first, in which case the outcome is unknown.
type forwardFuture struct {
	once   sync.Once
	done   chan struct{}
	stream *peerStream
	res    *Result
	err    error
}

func (f *forwardFuture) complete(res *Result, err error) {
	f.once.Do(func() {
		f.res, f.err = res, err
		close(f.done)
	})
}

func (f *forwardFuture) Error() error            { <-f.done; return f.err }
func (f *forwardFuture) Response() interface{}   { <-f.done; return f.res }
func (f *forwardFuture) doneCh() <-chan struct{} { return f.done }

// forwarder is a follower's (or observer's) one stream to the current leader, kept by a
// dialer goroutine of its own: a proposal never dials and never waits holding a lock,
// so an election stalls no reader and no other connection. Every proposal goes on the
// stream there is when it is made; when the stream breaks or the leader changes, the
// proposals still waiting on the old stream fail (outcome unknown) and nothing is sent
// again: the connections that made them are closed, so none of their later writes is
// applied without them.
type forwarder struct {
	n       *Node
	mu      sync.Mutex
	st      *peerStream   // to the leader; nil while there is none
	changed chan struct{} // closed when st changes
	kick    chan struct{} // wakes the dialer
	every   time.Duration // the dialer's retry interval
	sysSeq  atomic.Uint64 // Seq of proposals that are no connection's (Conn 0)

	touchMu sync.Mutex
	touched map[int64]int32 // sessions heard from since the last ping to the leader

	// unusable is since when reachesLeader has found no usable stream to which leader;
	// nil while there is one.
	unusable atomic.Pointer[unusableStream]
}

// unusableStream is since when (UnixNano) a member has had no usable stream to leader.
type unusableStream struct {
	leader raft.ServerID
	since  int64
}

// streamGrace is how long a member that knows its leader may be without a usable stream
// to it and still count as having one: a redial after a leader change takes far less.
// Longer, and its clients' writes fail and their sessions' touches never reach the
// leader, which expires them while the member answers their pings; ZooKeeper's pings
// travel with replication, so a follower cut off from its leader stops serving.
func streamGrace(heartbeat time.Duration) time.Duration { return 2 * heartbeat }

// reachesLeader reports whether this member has a usable stream to the leader raft
// names, or has had none for less than streamGrace since it first found so (sampled by
// its callers: the server asks when LeaderNews says the stream changed, then every half
// heartbeat until it is usable again) while raft named that leader. A
// new leader's grace starts when it is first seen: the time without one before (an
// election, a start) is not counted against the dial to it.
func (fw *forwarder) reachesLeader() bool {
	if st, _ := fw.usable(); st != nil {
		fw.unusable.Store(nil)
		return true
	}
	_, leader := fw.n.raft.LeaderWithID()
	now := time.Now().UnixNano()
	u := fw.unusable.Load()
	if u == nil || u.leader != leader {
		fw.unusable.Store(&unusableStream{leader: leader, since: now})
		return true
	}
	return time.Duration(now-u.since) < streamGrace(fw.n.cfg.HeartbeatTimeout)
}

// newForwarder starts the system Seq at the clock, so a restarted server never waits on
// an entry its previous run forwarded with the same Seq (the log may still replay it).
func newForwarder(n *Node) *forwarder {
	fw := &forwarder{n: n, changed: make(chan struct{}), kick: make(chan struct{}, 1), every: min(n.cfg.HeartbeatTimeout/2, 250*time.Millisecond)}
	fw.sysSeq.Store(uint64(time.Now().UnixNano()))
	return fw
}

// usable returns the stream to the leader if there is one new proposals may take, else
// nil and a channel closed when the stream changes. During an election (no leader
// known) there is none: a proposal waits for the winner rather than go to the old
// leader, which would most likely refuse it.
func (fw *forwarder) usable() (*peerStream, <-chan struct{}) {
	fw.mu.Lock()
	st, changed := fw.st, fw.changed
	fw.mu.Unlock()
	if _, leader := fw.n.raft.LeaderWithID(); st != nil && string(leader) == st.leader && !st.left() {
		return st, nil
	}
	fw.wakeDialer()
	return nil, changed
}

// send forwards e on st; the future completes when e is applied here.
func (fw *forwarder) send(e *Entry, st *peerStream) Future {
	body := e.Marshal()
	if 1+len(body) > maxForwardFrame { // the frame: its kind byte and the entry
		return failedFuture{fmt.Errorf("%w: %d bytes", ErrEntryTooLarge, len(body))}
	}
	fut := &forwardFuture{done: make(chan struct{}), stream: st}
	key := waitKey{conn: e.Conn, seq: e.Seq}
	fw.n.FSM.waiters.put(key, fut)
	if st.broken.Load() {
		// broke before the waiter was stored: nothing else fails it
		fw.n.FSM.waiters.drop(key, fut)
		fut.complete(nil, fmt.Errorf("%w: stream to leader broke", errNotSent))
		return fut
	}
	if err := st.write(frameEntry, body); err != nil {
		// The leader cannot decode a frame that did not arrive whole.
		fw.n.FSM.waiters.drop(key, fut)
		fut.complete(nil, fmt.Errorf("%w: %v", errNotSent, err))
		fw.breakStream(st, fmt.Errorf("%w: %v", ErrNoLeader, err))
	}
	return fut
}

// breakStream closes st and fails every proposal still waiting on it.
func (fw *forwarder) breakStream(st *peerStream, err error) {
	if !st.broken.CompareAndSwap(false, true) {
		return
	}
	st.conn.Close()
	fw.mu.Lock()
	replaced := fw.st == st
	if replaced {
		fw.st = nil
		close(fw.changed)
		fw.changed = make(chan struct{})
	}
	fw.mu.Unlock()
	if replaced {
		fw.n.announce()
	}
	fw.n.FSM.waiters.eachOnStream(st, func(f *forwardFuture) { f.complete(nil, err) })
	fw.wakeDialer()
}

func (fw *forwarder) wakeDialer() {
	select {
	case fw.kick <- struct{}{}:
	default:
	}
}

// dialLoop keeps the stream pointed at the leader: woken by raft's leader observations,
// by a proposal or a broken stream, and, only while there is no stream to the leader
// raft knows (a dial failed), every `every`; an idle member with its stream up does
// nothing here.
func (fw *forwarder) dialLoop() {
	every := fw.every
	retry := time.NewTimer(every)
	defer retry.Stop()
	for {
		select {
		case <-fw.n.done:
			return
		case <-retry.C:
		case <-fw.kick: // also raft's leader observations (Node's observer)
		}
		if !fw.redial() {
			retry.Reset(every)
		}
	}
}

// redial points the stream at the leader raft knows, and reports whether it is settled:
// false asks for another try soon (no leader known yet, or the dial failed).
func (fw *forwarder) redial() bool {
	_, id := fw.n.raft.LeaderWithID()
	fw.mu.Lock()
	st := fw.st
	fw.mu.Unlock()
	switch {
	case id == "": // an election: keep the stream, the old leader may win again
		return false
	case string(id) == fw.n.cfg.ID:
		if st != nil {
			fw.breakStream(st, fmt.Errorf("%w: this member leads now", ErrNoLeader))
		}
		return true
	case st != nil && st.leader == string(id) && !st.left():
		return true
	}
	// A stream whose member said it left and that raft names the leader again (it was
	// re-elected, or raft has not heard of the winner yet) is replaced: the member
	// refuses everything after its first refusal on a stream, so only a new one can
	// carry proposals. Not sooner than `every` after it left, so that a member that
	// still does not lead is not dialed again and again.
	if st != nil && st.leader == string(id) {
		if time.Since(time.Unix(0, st.leftAt.Load())) < fw.every {
			return false
		}
		fw.breakStream(st, fmt.Errorf("%w: the leader left", ErrNoLeader))
		st = nil
	}
	p, ok := fw.n.peer(string(id))
	if !ok {
		return false
	}
	c, err := fw.n.cfg.Network.Dial(p.PeerAddr, 2*time.Second)
	if err != nil {
		if connRefused(err) && fw.n.prompt != nil {
			fw.n.prompt.refused(id) // the leader may be gone (prompt_election.go)
		}
		return false
	}
	if st != nil {
		fw.breakStream(st, fmt.Errorf("%w: the leader changed", ErrNoLeader))
	}
	nst := newPeerStream(c, string(id))
	fw.mu.Lock()
	fw.st = nst
	close(fw.changed)
	fw.changed = make(chan struct{})
	fw.mu.Unlock()
	fw.n.announce()
	go fw.readFrom(nst)
	fw.ping(nst) // the leader counts its learners by these
	return true
}

// readFrom reads what the leader sends on st: commit notices and refused proposals.
func (fw *forwarder) readFrom(st *peerStream) {
	br := bufio.NewReader(st.conn)
	for {
		b, err := readFrame(br)
		if err != nil || len(b) == 0 {
			fw.breakStream(st, fmt.Errorf("%w: stream to leader broke", ErrNoLeader))
			return
		}
		switch {
		case b[0] == frameCommit && len(b) == 17:
			fw.n.catch.notice(readPoint(b))
		case b[0] == frameDurable && len(b) == 17:
			fw.n.catch.leaderDurable(readPoint(b))
		case b[0] == frameLeft && len(b) == 1:
			st.leave()
			fw.wakeDialer()
			fw.n.announce()
		case b[0] == frameRefused && len(b) >= 18:
			if b[17] == refusedNotLeader {
				st.leave()
				fw.n.announce()
			}
			key := waitKey{conn: binary.BigEndian.Uint64(b[1:]), seq: binary.BigEndian.Uint64(b[9:])}
			if f, ok := fw.n.FSM.waiters.onStream(key, st); ok {
				f.complete(nil, decodeRefusal(b[17], b[18:]))
			}
		default:
			fw.breakStream(st, fmt.Errorf("%w: bad frame from leader", ErrNoLeader))
			return
		}
	}
}

// touch records that a session was heard from here; pingLoop reports it to the leader.
func (fw *forwarder) touch(id int64, timeout int32) {
	fw.touchMu.Lock()
	fw.touchLocked(id, timeout)
	fw.touchMu.Unlock()
}

// pingLoop sends the sessions heard from to the leader every half tick, so sessions
// connected to a follower do not expire on the leader.
func (fw *forwarder) pingLoop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-fw.n.done:
			return
		case <-t.C:
		}
		fw.n.checkServing()
		fw.mu.Lock()
		st := fw.st
		fw.mu.Unlock()
		if st != nil {
			fw.ping(st)
		}
	}
}

// ping sends the sessions touched since the last ping (sent even with none: the leader
// counts its learners by these). Sessions a failed ping carried are kept for the next.
func (fw *forwarder) ping(st *peerStream) {
	fw.touchMu.Lock()
	touched := fw.touched
	fw.touched = nil
	fw.touchMu.Unlock()
	msg := append([]byte{byte(len(fw.n.cfg.ID))}, fw.n.cfg.ID...)
	for id, to := range touched {
		msg = binary.BigEndian.AppendUint64(msg, uint64(id))
		msg = binary.BigEndian.AppendUint32(msg, uint32(to))
	}
	if err := st.write(framePings, msg); err != nil {
		fw.touchMu.Lock()
		for id, to := range touched {
			if _, ok := fw.touched[id]; !ok {
				fw.touchLocked(id, to)
			}
		}
		fw.touchMu.Unlock()
		fw.breakStream(st, fmt.Errorf("%w: %v", ErrNoLeader, err))
	}
}

// touchLocked is touch with touchMu held.
func (fw *forwarder) touchLocked(id int64, timeout int32) {
	if fw.touched == nil {
		fw.touched = map[int64]int32{}
	}
	fw.touched[id] = timeout
}

func (fw *forwarder) close() {
	fw.mu.Lock()
	st := fw.st
	fw.mu.Unlock()
	if st != nil {
		fw.breakStream(st, ErrNoLeader)
	}
}
