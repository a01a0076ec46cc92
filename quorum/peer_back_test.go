package quorum

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum/netsim"
)

// A member cut off while a write committed catches up soon after the cut heals, although
// the leader's CommitTimeout (its idle retry) is far longer: the member answering again
// nudges replication to it (peerBack). Without the nudge it would wait for the next write
// or the CommitTimeout.
func TestAMemberCutOffCatchesUpWhenItAnswersAgain(t *testing.T) {
	net := netsim.New()
	nodes := openMembersWith(t, threePeers(t), func(p Peer, c *Config) {
		c.HeartbeatTimeout = 500 * time.Millisecond
		c.CommitTimeout = 20 * time.Second
		c.Network = net.Member(p.ID)
	})
	leader, follower := leaderAndFollowerOf(t, nodes)
	sid := int64(0x61)
	propose(t, leader, &Entry{Session: sid, Op: jute.OpCreateSession, Time: 1, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)

	net.Isolate(follower.cfg.ID)
	res := propose(t, leader, &Entry{Session: sid, Op: jute.OpCreate, Time: 2, Req: &jute.CreateRequest{Path: "/while-cut", Acl: open}})
	if res.Err != jute.OK {
		t.Fatalf("create: %v", res.Err)
	}
	if follower.FSM.LastZxid() >= res.Zxid {
		t.Fatal("the cut member has the write: the test proves nothing")
	}
	net.Heal()
	healed := time.Now()
	if !follower.FSM.WaitApplied(res.Zxid, 5*time.Second) {
		t.Fatalf("the member did not catch up within 5 s of the heal (CommitTimeout 20 s)")
	}
	t.Logf("caught up %v after the heal", time.Since(healed).Round(time.Millisecond))
}
