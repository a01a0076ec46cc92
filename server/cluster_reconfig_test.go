package server

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
)

// A reconfig sent while another is on its way to the log is refused ReconfigInProgress,
// as ZooKeeper's leader refuses one while its last proposed configuration is not its
// committed one; once the first is answered, the second goes through. Two reconfigs
// pipelined on one connection of a follower, each fine on its own. The second may reach
// the leader only after the first was applied there (a stall of the follower's forwarding
// longer than the commit, seen once under -race in make test): then both are right to
// pass, and the pair is tried again with new servers, a few times at most. The first
// pair goes as soon as the cluster serves, without waiting for the leader to write its
// first membership: the leader holds a reconfig until it has (as a ZooKeeper ensemble
// has its configuration from the start).
func TestClusterReconfigInProgress(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.ReconfigEnabled, c.SuperDigest = true, superDigest })
	c := superSession(t, tc.addr(tc.follower()))
	peers := 3
	for try := range 4 {
		id := 4 + 2*try
		first := &jute.ReconfigRequest{JoiningServers: fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer;%d", id, 3*id-11, 3*id-10, 3*id-9), CurConfigId: -1}
		second := &jute.ReconfigRequest{JoiningServers: fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer;%d", id+1, 3*id-8, 3*id-7, 3*id-6), CurConfigId: -1}
		x1, x2 := c.send(jute.OpReconfig, first), c.send(jute.OpReconfig, second)
		var answers [2]jute.ReplyHeader
		var gd jute.GetDataResponse
		for i := range answers {
			b, err := jute.ReadFrame(c.br, nil, jute.DefaultMaxBuffer)
			if err != nil {
				t.Fatal(err)
			}
			d := jute.NewDecoder(b)
			answers[i].Decode(d)
			if answers[i].Xid == x1 && answers[i].Err == 0 {
				gd.Decode(d)
			}
			if d.Err != nil {
				t.Fatal(d.Err)
			}
		}
		if answers[0].Xid != x1 || answers[1].Xid != x2 {
			t.Fatalf("answers for xids %d, %d; sent %d, %d", answers[0].Xid, answers[1].Xid, x1, x2)
		}
		if answers[0].Err == 0 && answers[1].Err == 0 {
			t.Logf("try %d: the second reconfig reached the leader after the first was applied; again", try)
			peers += 2
			continue
		}
		if answers[0].Err != 0 || answers[1].Err != int32(jute.ErrReconfigInProgress) {
			t.Fatalf("pipelined reconfigs: %d, %d; want OK, ReconfigInProgress", answers[0].Err, answers[1].Err)
		}
		m, err := quorum.ParseMembership(string(gd.Data))
		if err != nil || len(m.Peers) != peers+1 {
			t.Fatalf("after the first: %q (%v)", gd.Data, err)
		}
		if h := c.call(jute.OpReconfig, second, &gd); h.Err != 0 {
			t.Fatalf("the second, sent again after the first was answered: %d", h.Err)
		}
		if m, err := quorum.ParseMembership(string(gd.Data)); err != nil || len(m.Peers) != peers+2 {
			t.Fatalf("after the second: %q (%v)", gd.Data, err)
		}
		return
	}
	t.Fatal("no pipelined reconfig was refused ReconfigInProgress in 4 tries")
}
