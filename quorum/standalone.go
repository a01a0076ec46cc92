package quorum

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// standaloneLease is how often a standalone server's raft leader checks its lease. A
// leader of one voter always holds it, so the check finds nothing to do, yet raft wakes
// its leader loop for it every LeaderLeaseTimeout, which no setting can make longer than
// the HeartbeatTimeout. At the 50 ms timeouts a single voter used to have (so that it
// elected itself soon after starting) those wake-ups were about three quarters of an idle
// standalone server's CPU (docs/benchmarks.md, twenty-fifth session).
const standaloneLease = 500 * time.Millisecond

// standaloneFirstTimeout is a standalone raft's heartbeat and election timeout until
// electAtOnce lowers them to standaloneLease: it must be above the lease, as raft only
// re-arms a follower's timer when its timeout is lowered. A variable for the test that
// sets it to an hour, so that only electAtOnce, not the timer, can elect within its wait.
var standaloneFirstTimeout = standaloneLease + time.Millisecond

// standaloneTimeouts sets a standalone raft's timing: its lease, and first timeouts above
// it for electAtOnce to lower.
func standaloneTimeouts(rc *raft.Config) {
	rc.HeartbeatTimeout, rc.ElectionTimeout = standaloneFirstTimeout, standaloneFirstTimeout
	rc.LeaderLeaseTimeout = standaloneLease
}

// electAtOnce makes a standalone raft, just started as a follower, stand for election
// now instead of after a heartbeat timeout. Lowering its timeouts makes raft re-arm the
// follower's timer at zero; having never heard from a leader, the follower then stands
// for election, which a single voter wins with its own vote.
func electAtOnce(r *raft.Raft) error {
	rc := r.ReloadableConfig()
	if rc.HeartbeatTimeout <= standaloneLease {
		return fmt.Errorf("first heartbeat timeout %v is not above the lease %v: raft would not re-arm its timer", rc.HeartbeatTimeout, standaloneLease)
	}
	rc.HeartbeatTimeout, rc.ElectionTimeout = standaloneLease, standaloneLease
	return r.ReloadConfig(rc)
}
