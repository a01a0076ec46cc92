package quorum

import (
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Entries that are no connection's write (a new session, a moved session, a catch-up
// sync, a leader's duty) reach the log through Propose, which proposes them again while
// the leader changes; a connection's writes go through its Stream (stream.go).

// Propose submits an entry that is no client connection's write (a new session, a
// moved session, a catch-up sync, a leader's duty): on the leader directly, on a
// follower over its stream to the leader. A connection's writes go through its Stream,
// which keeps them in order. The future's Response is a *Result once e is applied here;
// its Error is set when the outcome is unknown (no leader, leadership lost, stream
// broken). Every such entry is safe to apply twice (a session id already taken, a
// session already moved or closed, a node already deleted, a config already set are
// all refused by Apply), so one that failed because the leader went away is proposed
// again, for up to ten heartbeat timeouts, when the future is waited for.
func (n *Node) Propose(e *Entry) Future {
	if e.Time == 0 {
		e.Time = time.Now().UnixMilli()
	}
	if e.Op == OpMoveSession {
		// The connections of the session here that began to write before are ones its
		// client left: none of their writes may follow the move (Stream.sendAll).
		n.sessionConns.of(e.Session).whileNewest(n.conns.Add(1), func() {})
	}
	return &retryFuture{n: n, e: e, f: n.propose(e), until: time.Now().Add(10 * n.cfg.HeartbeatTimeout)}
}

func (n *Node) propose(e *Entry) Future {
	p, err := n.path()
	if err != nil {
		return failedFuture{err}
	}
	if p.peer != nil {
		e.Origin, e.Conn, e.Seq = n.cfg.ID, 0, n.fwd.sysSeq.Add(1)
	}
	return n.send(e, p)
}

// leaderLost reports whether a proposal failed because the leader it went to went away.
func leaderLost(err error) bool {
	return errors.Is(err, ErrNoLeader) || errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost)
}

// retryFuture proposes its entry again while it failed because the leader went away.
type retryFuture struct {
	n     *Node
	e     *Entry
	f     Future
	until time.Time
	once  sync.Once
}

func (r *retryFuture) Error() error {
	r.once.Do(func() {
		for err := r.wait(); leaderLost(err) && time.Now().Before(r.until) && !r.n.isStopping(); err = r.wait() {
			time.Sleep(10 * time.Millisecond)
			r.f = r.n.propose(r.e)
		}
	})
	return r.f.Error()
}

// wait waits for the outcome of the proposal made last, or until the member stops: a
// leader's entry that its stopping followers never acknowledge would be answered only
// when raft steps down, a heartbeat timeout later. The outcome is then unknown. (A
// connection's write on a leader, a Stream's, still waits for raft's answer: its
// responder is not among the goroutines Server.Close waits for.)
func (r *retryFuture) wait() error {
	if d, ok := r.f.(interface{ doneCh() <-chan struct{} }); ok {
		select {
		case <-d.doneCh():
		case <-r.n.stopping:
			select {
			case <-d.doneCh(): // done too: the outcome is known
			default:
				r.f = failedFuture{errStopping} // Error and Response answer without it
			}
		}
	}
	return r.f.Error()
}

func (r *retryFuture) Response() interface{} {
	r.Error()
	return r.f.Response()
}
