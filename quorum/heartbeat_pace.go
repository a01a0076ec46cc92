package quorum

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

// paceHeartbeats sets raft's HeartbeatTimeout for the role this member just took. The
// leader's replication backoff after a failed RPC is capped by the same setting, at half
// of it: a member that comes back is heard from up to a quarter of a second later.
func (n *Node) paceHeartbeats(leading bool) {
	if !n.IsClustered() {
		return
	}
	rc := n.raft.ReloadableConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = n.cfg.HeartbeatTimeout, n.cfg.HeartbeatTimeout
	if leading {
		// Raft asks for an election timeout no shorter; a leader does not use it, and
		// it is put back before this member can stand in an election.
		rc.HeartbeatTimeout *= leaderHeartbeatSlowdown
		rc.ElectionTimeout = rc.HeartbeatTimeout
	}
	if err := n.raft.ReloadConfig(rc); err != nil {
		n.cfg.Logger.Warn("cannot set the heartbeat pace", "leading", leading, "err", err)
	}
}
