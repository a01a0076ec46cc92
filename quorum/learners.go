package quorum

import (
	"cmp"
	"time"

	"github.com/hashicorp/raft"
)

// This member's role as ZooKeeper names it, and a leader's count of the learners that
// answered it within the sync window (mntr's learners and synced followers).

// Mode is ZooKeeper's name for this server's role: standalone, leader, follower or
// observer.
func (n *Node) Mode() string {
	switch {
	case len(n.cfg.Peers) == 0:
		return "standalone"
	case n.raft.State() == raft.Leader:
		return "leader"
	case n.isObserver():
		return "observer"
	}
	return "follower"
}

// isObserver reports whether this member observes, by the current membership (the
// configured one before the first leader wrote it).
func (n *Node) isObserver() bool {
	if p, ok := n.peer(n.cfg.ID); ok {
		return p.Observer
	}
	return false
}

func (n *Node) learnerSeen(id string) { n.learners.Store(id, time.Now()) }

// syncWindow is Config.SyncWindow, or two ticks without one.
func (n *Node) syncWindow() time.Duration { return cmp.Or(n.cfg.SyncWindow, 2*n.cfg.TickTime) }

// Learners counts, on the leader, the members heard from within the sync window whose
// stream has not ended since, as ZooKeeper's leader counts its synced followers and
// observers (it drops a learner whose socket closed, or read nothing for syncLimit
// ticks); nonVoting counts apart the followers among them that the membership no longer
// lists (a reconfig removed them; they follow as non-voters): ZooKeeper's
// synced_non_voting_followers. Elsewhere all are 0.
func (n *Node) Learners() (followers, nonVoting, observers int) {
	if !n.IsLeader() {
		return 0, 0, 0
	}
	return n.learnersAt(time.Now())
}

// learnersAt counts the members other than this one heard from within the sync window
// before now: followers (non-voting ones included, also counted apart) and observers.
func (n *Node) learnersAt(now time.Time) (followers, nonVoting, observers int) {
	recent := now.Add(-n.syncWindow())
	m, held := n.FSM.Members()
	n.learners.Range(func(k, v any) bool {
		id := k.(string)
		if id == n.cfg.ID || v.(time.Time).Before(recent) {
			return true
		}
		if held {
			if _, listed := m.Peer(id); !listed {
				followers++
				nonVoting++
				return true
			}
		}
		switch p, ok := n.peer(id); {
		case !ok:
		case p.Observer:
			observers++
		default:
			followers++
		}
		return true
	})
	return followers, nonVoting, observers
}
