package quorum

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// ErrOrderBroken fails a connection's write that was not proposed because an earlier
// write of the connection failed, or because the way to the log changed while earlier
// writes were still on the old one.
var ErrOrderBroken = errors.New("quorum: an earlier write of this connection has an unknown outcome")

// Stream is one client connection's ordered way into the log. Raft orders entries only
// once they reach the leader's log, so a connection's writes must all take one path
// there: raft.Apply while this member leads, or its stream to the leader while it
// follows. A Stream keeps to the path its outstanding writes took; it takes another only
// when every earlier write has been answered, or when the leader refused the oldest
// outstanding write before appending it (it then refuses every later one on that
// stream too), in which case the refused writes are sent again, in order, on the new
// path. Once a write fails with an unknown outcome (the stream broke, leadership was
// lost after appending), nothing more is proposed or sent again. Each write carries the
// connection's (Conn, Seq), and the FSM applies it only right after the previous one
// (session.Table.Advance), so even a path that reordered could not apply a write
// without the ones before it; and once a newer connection of the same session on this
// member has sent a write, or the session moved here, nothing more of an older one is
// sent (sendAll).
// Propose is called from one goroutine, and the futures' Error in the order proposed
// (the connection's responder).
type Stream struct {
	n    *Node
	conn uint64
	mu   sync.Mutex
	seq  uint64
	path path
	out  []*streamFuture // proposed, outcome not known yet, oldest first
	err  error           // the first failure; nothing is proposed after it
}

// path is where a write goes: this member's raft while it leads in term, else a stream
// to the leader.
type path struct {
	term uint64
	peer *peerStream
}

// NewStream returns the ordered path of a new client connection.
func (n *Node) NewStream() *Stream { return &Stream{n: n} }

// Propose submits a write of the stream's connection, stamped with its Origin, Conn and
// Seq. The future fails, and the write is not proposed, once an earlier one failed.
func (s *Stream) Propose(e *Entry) Future {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return failedFuture{s.err}
	}
	if s.conn == 0 { // numbered at its first write, before it waits for a path (sendAll)
		s.conn = s.n.conns.Add(1)
	}
	p, err := s.n.path()
	if err == nil && len(s.out) > 0 && p != s.path {
		err = ErrOrderBroken
	}
	if err != nil {
		s.err = err
		return failedFuture{err}
	}
	s.path = p
	s.seq++
	e.Origin, e.Conn, e.Seq = s.n.cfg.ID, s.conn, s.seq
	if e.Time == 0 {
		e.Time = time.Now().UnixMilli()
	}
	f := &streamFuture{s: s, e: e}
	if !s.sendAll([]*streamFuture{f}, p) {
		s.err = ErrOrderBroken
		return failedFuture{s.err}
	}
	s.out = append(s.out, f)
	return f
}

// sendAll sends the writes gs on p, in order, unless a newer connection of their
// session has sent a write from this member, or the session has moved here since this
// connection began to write; under s.mu.
//
// A client whose connection broke comes back on a new one, and the old connection's
// Stream may still hold a write: waiting for a leader (Node.path), or to be sent again
// after the leader refused it unappended (settle). Sent after the new connection's
// writes, its first write would be applied after them, as the FSM's write cursor takes
// any connection's first write, and so does it after a move resets the cursor: the
// client's older write would land over its newer, acknowledged one. So a connection is
// numbered (Node.conns) when it begins to write, a move of a session here claims it with
// a number of its own (Node.Propose), and a connection sends only while no higher number
// has claimed its session. The claim and the send happen under the session's lock, so an
// older connection's write is sent before anything of the newer one (and so comes before
// it on the one path this member's writes take at a time; across a leader change the
// leader's newest streams keep that order) or not at all. ZooKeeper's server passes a
// session's requests through one pipeline, the old connection's before the new one's,
// and its leader refuses a write from the member a session moved away from.
func (s *Stream) sendAll(gs []*streamFuture, p path) bool {
	return s.n.sessionConns.of(gs[0].e.Session).whileNewest(s.conn, func() {
		for _, g := range gs {
			g.inner = s.n.send(g.e, p)
		}
	})
}

// streamFuture is one write of a Stream.
type streamFuture struct {
	s     *Stream
	e     *Entry
	inner Future // replaced when the write is sent again; under s.mu
	once  sync.Once
	err   error
}

func (f *streamFuture) Error() error {
	f.once.Do(func() { f.err = f.s.settle(f) })
	return f.err
}

func (f *streamFuture) Response() interface{} {
	f.Error()
	f.s.mu.Lock()
	inner := f.inner
	f.s.mu.Unlock()
	return inner.Response()
}

// settle waits for the outcome of f, the oldest outstanding write, sending it and the
// writes after it again while the leader refused them unappended (for up to ten
// heartbeat timeouts from the first refusal). A write refused as out of its
// connection's order fails too.
func (s *Stream) settle(f *streamFuture) error {
	var deadline time.Time // set at the first refusal: most writes read no clock here
	retrying := func(err error) bool {
		if !notAppended(err) {
			return false
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(10 * s.n.cfg.HeartbeatTimeout)
		}
		return time.Now().Before(deadline)
	}
	for {
		s.mu.Lock()
		inner := f.inner
		s.mu.Unlock()
		err := inner.Error()
		if err == nil {
			if r, ok := inner.Response().(*Result); !ok {
				err = errors.New("quorum: a write was applied without its result")
			} else if r.Err == ErrOutOfOrder {
				err = ErrOrderBroken
			}
		}
		retry := retrying(err)
		if retry {
			time.Sleep(10 * time.Millisecond) // a member just refused it: let the election go on
		}
		s.mu.Lock()
		if retry && s.err == nil && time.Now().Before(deadline) {
			if p, perr := s.n.path(); perr == nil {
				if s.sendAll(s.out, p) { // f first, then the rest in order
					s.path = p
					s.mu.Unlock()
					continue
				}
				err = ErrOrderBroken // the client wrote on a newer connection since
			}
		}
		if err != nil && s.err == nil {
			s.err = err
		}
		if len(s.out) > 0 && s.out[0] == f {
			s.out[0] = nil
			s.out = s.out[1:]
		}
		s.mu.Unlock()
		return err
	}
}

// errStopping fails a write that waited for a leader, or a proposal of the member's own
// that waited for its outcome, when the member began to stop (Node.StopWaiting).
var errStopping = fmt.Errorf("%w: this member is stopping", ErrNoLeader)

// path is the way a write goes now: raft while this member leads (or is standalone),
// else the stream to the leader, waited for (up to ten heartbeat timeouts) while an
// election runs or the stream is being dialed; this member may win the election.
func (n *Node) path() (path, error) {
	if !n.IsClustered() {
		return path{term: 1}, nil
	}
	deadline := time.Now().Add(10 * n.cfg.HeartbeatTimeout)
	for {
		if n.raft.State() == raft.Leader {
			return path{term: n.raft.CurrentTerm()}, nil
		}
		st, changed := n.fwd.usable()
		if st != nil {
			return path{peer: st}, nil
		}
		if time.Now().After(deadline) {
			return path{}, fmt.Errorf("%w: none known", ErrNoLeader)
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-changed:
		case <-t.C:
		case <-n.stopping:
			t.Stop()
			return path{}, errStopping
		}
		t.Stop()
	}
}

// send proposes e on p.
func (n *Node) send(e *Entry, p path) Future {
	if p.peer == nil {
		n.membershipFirst()
		n.awaitMembers(e)
		n.judgeReconfig(e, p.term)
		return n.applies.wait(n.applyEntry(e.Op, e.Marshal()))
	}
	return n.fwd.send(e, p.peer)
}
