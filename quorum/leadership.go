package quorum

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Leadership as the server asks about it: whether this member knows a leader, is in
// step with it, or leads and is established (the barrier after an election), and the
// goroutine that starts and stops a leader's duties as raft hands leadership over.

// HasLeader reports whether this node knows a leader now (standalone: always) and, as a
// follower, reaches it: a usable stream to it, or one lost less than streamGrace ago.
func (n *Node) HasLeader() bool {
	addr, id := n.raft.LeaderWithID()
	if addr == "" {
		return false
	}
	if !n.IsClustered() || string(id) == n.cfg.ID || n.fwd == nil {
		return true // standalone, or the leader itself
	}
	return n.fwd.reachesLeader()
}

// Established reports whether this member leads and has applied everything committed
// before its term (its barrier), with the membership it writes first, and has started
// its duties: a ZooKeeper leader serves once it has synced with a quorum, and answers
// the four-letter words as not serving before. The term is compared, so duties started
// for an earlier term (leadership lost and won again before watchLeadership heard of
// it) do not count for the current one.
func (n *Node) Established() bool {
	return n.IsLeader() && n.establishedTerm.Load() == n.raft.CurrentTerm()
}

// Synced reports whether this member is in step with its leader's term: a leader once
// it is established; a follower or observer once its log (or a snapshot it installed)
// holds an entry of the current term. Raft's consistency check admits that entry only
// onto a log that matches the leader's up to it (Log Matching), and the leader's first
// entry of a term comes after every entry committed before the term, so the member has
// synced with the leader, as a ZooKeeper learner serves only once its leader's sync is
// done (UPTODATE). After an election a member far behind (a snapshot or a long backlog
// to take) or with a log that diverged is not synced while it catches up, nor one that
// has heard the new leader's heartbeat before its first entries. A member restarted
// within a term (no election since) held entries of that term before it stopped, which
// say nothing of what it missed: in that term it is synced once it applied the first
// commit point its leader told it (caughtUpSinceStart). Cached per term.
func (n *Node) Synced() bool {
	if n.IsLeader() {
		return n.Established()
	}
	term := n.raft.CurrentTerm()
	if term == 0 {
		return false
	}
	if n.syncedTerm.Load() == term {
		return true
	}
	if n.lastHeldTerm() != term {
		return false
	}
	if term == n.restartTerm.Load() && !n.caughtUpSinceStart() {
		return false
	}
	n.syncedTerm.Store(term)
	return true
}

// caughtUpSinceStart reports whether this member applied the first commit point it was
// told since it started: the leader tells it, on the stream this member opens to it,
// what it committed so far (a commit or a durable notice) before anything else. With no
// such news within a sync window of knowing its leader (a leader that applied no command
// yet, nor restored a snapshot; a stream to the leader that does not open), the member
// goes by the term alone, as after an election.
func (n *Node) caughtUpSinceStart() bool {
	if heard := n.catch.firstHeard.Load(); heard > 0 {
		// The point may be an entry the FSM is never given (a no-op, a barrier) that an
		// installed snapshot ends at: its index counts as applied too.
		if n.FSM.through.Load() >= heard {
			return true
		}
		snap, _ := strconv.ParseUint(n.raft.Stats()["last_snapshot_index"], 10, 64)
		return snap >= heard
	}
	return n.look != nil && n.look.knownFor() >= n.syncWindow()
}

// lastHeldTerm is the term of the last entry this member holds: its log's last entry, or
// the snapshot it installed if that reaches further (raft's last_log_term leaves an
// installed snapshot out). Asked rarely: it formats all of raft's stats.
func (n *Node) lastHeldTerm() uint64 {
	st := n.raft.Stats()
	num := func(k string) uint64 {
		v, _ := strconv.ParseUint(st[k], 10, 64)
		return v
	}
	if num("last_snapshot_index") >= num("last_log_index") {
		return num("last_snapshot_term")
	}
	return num("last_log_term")
}

// LeaderID is the id of the member this one knows to lead.
func (n *Node) LeaderID() (string, bool) {
	_, id := n.raft.LeaderWithID()
	return string(id), id != ""
}

// LeaderNews gets a token whenever raft names another leader or none, and whenever this
// member's stream to its leader breaks, is replaced or is refused; nil (never ready) in
// standalone. One token may stand for several changes.
func (n *Node) LeaderNews() <-chan struct{} { return n.leaderNews }

// announce puts a token on LeaderNews.
func (n *Node) announce() {
	if n.leaderNews != nil {
		select {
		case n.leaderNews <- struct{}{}:
		default:
		}
	}
}

// LeaderSteady reports whether this member leads, or names a leader and holds a stream
// to it that new proposals may take: a state that ends only with a token on LeaderNews,
// so a watcher of HasLeader need not look again until one comes. Always in standalone.
func (n *Node) LeaderSteady() bool {
	_, id := n.raft.LeaderWithID()
	if id == "" {
		return false
	}
	if !n.IsClustered() || string(id) == n.cfg.ID || n.fwd == nil {
		return true
	}
	st, _ := n.fwd.usable()
	return st != nil
}

// IsLeader reports whether this node leads now.
func (n *Node) IsLeader() bool { return n.raft.State() == raft.Leader }

// WaitForLeader blocks until some member leads, or the timeout passes.
func (n *Node) WaitForLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if addr, _ := n.raft.LeaderWithID(); addr != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("quorum: no leader elected in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitLeader blocks until this node leads and has applied everything committed before,
// or the timeout passes.
func (n *Node) WaitLeader(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for n.raft.State() != raft.Leader {
		if time.Now().After(deadline) {
			return errors.New("quorum: no leader elected in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := n.raft.Barrier(time.Until(deadline)).Error(); err != nil {
		return err
	}
	// A new leader writes its enforceQuota first thing (watchLeadership); serve after it.
	for n.FSM.EnforceQuota() != n.cfg.EnforceQuota {
		if time.Now().After(deadline) {
			return errors.New("quorum: enforceQuota not applied in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// writeEnforceQuota makes the log hold this leader's enforceQuota (Config.EnforceQuota).
func (n *Node) writeEnforceQuota() {
	if n.FSM.EnforceQuota() == n.cfg.EnforceQuota {
		return
	}
	// Not counted in ProposalSizes: ZooKeeper proposes nothing like it.
	e := &Entry{Op: OpSetEnforceQuota, Time: time.Now().UnixMilli(), Req: &EnforceQuotaRequest{On: n.cfg.EnforceQuota}}
	if err := n.raft.Apply(e.Marshal(), 0).Error(); err != nil {
		n.cfg.Logger.Warn("writing enforceQuota into the log failed", "err", err)
		return
	}
	n.cfg.Logger.Info("quotas enforced by the leader's setting", "zookeeper.enforceQuota", n.cfg.EnforceQuota)
}

// establishRetry is how long establish waits before it tries a refused barrier again.
const establishRetry = 50 * time.Millisecond

// establish writes the first membership if the state machine lacks it
// (membershipFirst) and waits for the barrier after an election: everything committed
// before this term applied. While this member still leads the same term, a refused
// barrier is tried again, the membership proposed again before it: raft refuses both
// while a leadership transfer is on its way (ErrLeadershipTransferInProgress), and a
// transfer can fail and leave this member leading, which must still become
// established (expire sessions, answer mntr). False once it no longer leads that term.
func (n *Node) establish() (term uint64, ok bool) {
	term = n.raft.CurrentTerm()
	for refused := 0; ; refused++ {
		n.membershipFirst() // its outcome is known once the barrier is
		err := n.raft.Barrier(0).Error()
		if err == nil {
			return term, true
		}
		if n.raft.State() != raft.Leader || n.raft.CurrentTerm() != term {
			n.cfg.Logger.Warn("barrier after election failed", "err", err)
			return term, false
		}
		if refused == 0 {
			n.cfg.Logger.Warn("barrier after election refused; trying again while leading", "term", term, "err", err)
		}
		n.membershipTerm.CompareAndSwap(term, 0)
		select {
		case <-n.done:
			return term, false
		case <-time.After(establishRetry):
		}
	}
}

func (n *Node) watchLeadership() {
	for {
		select {
		case <-n.done:
			return
		case leader := <-n.notify:
			if leader {
				if n.cfg.beforeLeading != nil {
					n.cfg.beforeLeading()
				}
				term, ok := n.establish()
				if !ok {
					continue
				}
				if n.IsClustered() {
					n.cfg.Logger.Info("leading", "term", n.raft.CurrentTerm(), "zxid", fmt.Sprintf("0x%x", n.FSM.LastZxid()))
				}
				n.writeEnforceQuota()
				n.duties.start()
				n.leadingSince.Store(time.Now().UnixNano())
				n.establishedTerm.Store(term)
				n.look.serving(true)
			} else {
				if n.IsClustered() {
					n.cfg.Logger.Info("no longer leading", "term", n.raft.CurrentTerm())
				}
				n.establishedTerm.Store(0)
				n.commits.notify() // the peer streams tell their members (frameLeft)
				n.duties.stop()
				// ZooKeeper's are a leader's own: the next leadership starts from -1.
				// (Cleared on the way out, not on the way in, so that nothing proposed
				// before this goroutine hears of a new leadership is lost.)
				n.proposalSizes.reset()
			}
		}
	}
}

// HandOver passes leadership to another voter and waits (up to timeout) until it leads,
// so stopping this server does not leave the cluster leaderless for an election
// timeout. It does nothing on a follower or a standalone server.
func (n *Node) HandOver(timeout time.Duration) error {
	if len(n.cfg.Peers) == 0 || n.raft.State() != raft.Leader {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- n.raft.LeadershipTransfer().Error() }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("quorum: leadership transfer: %w", err)
		}
		return nil
	case <-time.After(timeout):
		return errors.New("quorum: leadership transfer timed out")
	}
}
