package quorum

import "time"

// leaderHeartbeatTimeout is the HeartbeatTimeout a leader reloads when its configured one
// is ht. hashicorp/raft derives both ends from one setting: a follower calls an election
// once a check, every one to two HeartbeatTimeouts, finds no contact for a whole one, and
// a leader heartbeats each follower every tenth to fifth of its own HeartbeatTimeout,
// five to twenty heartbeats a window, most of an idle cluster's CPU. A member that leads
// reloads a longer timeout and puts the configured one back when it stops leading, so
// followers still notice a dead leader as soon. The longest gap between heartbeats, a
// fifth of the leader's timeout, leaves a follower heartbeatSlack before its check could
// find no contact: at the default tick (a 1 s timeout) a heartbeat every 350-700 ms,
// about four times a ZooKeeper leader's pace (every half tick) and 1.4 to 2.9 a window;
// at least twice raft's pace, as before, where that slack would allow less. Below
// slowedFrom (tickTime under a second, as in the in-process tests) raft's own pace stays.
func leaderHeartbeatTimeout(ht time.Duration) time.Duration {
	if ht < slowedFrom {
		return ht
	}
	return max(2*ht, 5*(ht-heartbeatSlack(ht)))
}

// heartbeatSlack is what a follower's timeout ht keeps beyond a slowed leader's longest
// gap between heartbeats: three tenths of it, at least 300 ms, room for a loaded
// machine's scheduling and a slow round trip. (The leader's lease, a whole ht, has the
// same room.)
func heartbeatSlack(ht time.Duration) time.Duration {
	return max(300*time.Millisecond, ht*3/10)
}

// slowedFrom is the shortest configured HeartbeatTimeout a leader slows down at: below
// 250 ms twice raft's pace would leave a follower under 150 ms of slack.
const slowedFrom = 250 * time.Millisecond

// paceHeartbeats follows raft's LeaderCh, which always holds the newest leadership and
// never makes raft wait, on a goroutine of its own: nothing that a new leader does first
// (watchLeadership's barrier waits for the FSM) may delay putting the timeouts back when
// leadership is lost, since a member that follows or stands for election meanwhile would
// wait twice as long before it calls one.
//
// Raft requires an ElectionTimeout no shorter than the HeartbeatTimeout, so a leader's is
// raised with it. A leader uses it only to bound a leadership transfer (HandOver, when a
// server stops), which may so take up to 3.5 times as long to give up at the default tick.
// Raft's backoff after a failed heartbeat is capped at half the leader's HeartbeatTimeout:
// a member that comes back is heard from up to that much later (1.75 s at the default
// tick; raft's pre-vote keeps a member that stands meanwhile from disturbing the leader).
func (n *Node) paceHeartbeats() {
	for {
		var leading bool
		select {
		case <-n.done:
			return
		case leading = <-n.raft.LeaderCh():
		}
		rc := n.raft.ReloadableConfig()
		rc.HeartbeatTimeout, rc.ElectionTimeout = n.cfg.HeartbeatTimeout, n.cfg.HeartbeatTimeout
		if leading {
			rc.HeartbeatTimeout = leaderHeartbeatTimeout(n.cfg.HeartbeatTimeout)
			rc.ElectionTimeout = rc.HeartbeatTimeout
		}
		if err := n.raft.ReloadConfig(rc); err != nil {
			n.cfg.Logger.Warn("cannot set the heartbeat pace", "leading", leading, "err", err)
		}
	}
}
