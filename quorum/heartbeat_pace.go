package quorum

import "time"

// leaderHeartbeatSlowdown is how many times raft's own pace a leader heartbeats at.
// hashicorp/raft derives both ends from one setting: a follower calls an election after
// one to two HeartbeatTimeouts without its leader, and a leader heartbeats each follower
// every tenth to fifth of its own HeartbeatTimeout, five to twenty heartbeats a window,
// 27 round trips a second in an idle three-member cluster at a 500 ms timeout, most of
// its idle CPU. A member that leads reloads its HeartbeatTimeout at this multiple and
// puts it back when it stops leading, so followers still notice a dead leader as soon,
// and hear from a live one two and a half to ten times a window. (A ZooKeeper leader
// pings each follower every half tick, ten times its syncLimit window.)
const leaderHeartbeatSlowdown = 2

// slowedFrom is the shortest configured HeartbeatTimeout a leader slows down at. The
// slack between a follower's shortest wait and the longest gap between heartbeats falls
// from 0.8 to 0.6 of the timeout; below 250 ms (tickTime under a second, as in the
// in-process tests) that is under 150 ms, within what a loaded machine's scheduling may
// take, so raft's own pace stays.
const slowedFrom = 250 * time.Millisecond

// paceHeartbeats follows raft's LeaderCh, which always holds the newest leadership and
// never makes raft wait, on a goroutine of its own: nothing that a new leader does first
// (watchLeadership's barrier waits for the FSM) may delay putting the timeouts back when
// leadership is lost, since a member that follows or stands for election meanwhile would
// wait twice as long before it calls one.
//
// Raft requires an ElectionTimeout no shorter than the HeartbeatTimeout, so a leader's is
// raised with it. A leader uses it only to bound a leadership transfer (HandOver, when a
// server stops), which may so take up to twice as long to give up. Raft's backoff after a
// failed heartbeat is capped at half the HeartbeatTimeout: a member that comes back is
// heard from up to that much later.
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
		if leading && n.cfg.HeartbeatTimeout >= slowedFrom {
			rc.HeartbeatTimeout *= leaderHeartbeatSlowdown
			rc.ElectionTimeout = rc.HeartbeatTimeout
		}
		if err := n.raft.ReloadConfig(rc); err != nil {
			n.cfg.Logger.Warn("cannot set the heartbeat pace", "leading", leading, "err", err)
		}
	}
}
