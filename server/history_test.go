package server

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// A history check through leader kills: go-zookeeper clients on a 3-process cluster
// create nodes, sequential nodes and compare-and-set a counter while the leader is
// killed with SIGKILL and restarted, twice, and then paused (SIGSTOP) and resumed. The
// checks are nemesisHistory's (faults_test.go): every acknowledged write on every member,
// nothing that no client attempted, the members agreeing, each client's sequential names
// increasing, no compare-and-set lost or doubled, no read older than one before.
func TestHistoryThroughLeaderKills(t *testing.T) {
	nemesisHistory(t, 3, func(t *testing.T, c *ztest.Cluster, _ int, _ time.Duration) {
		for kill := 0; kill < 2; kill++ {
			time.Sleep(700 * time.Millisecond)
			l := c.AwaitLeader(10 * time.Second)
			if l < 0 {
				t.Fatal("no leader")
			}
			t.Logf("killing the leader, member %d", l+1)
			c.Members[l].Kill()
			time.Sleep(700 * time.Millisecond)
			if err := c.Members[l].Restart(false); err != nil {
				t.Fatal(err)
			}
			if err := c.AwaitServing(60 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		// A leader paused keeps its connections open while the others elect a new one,
		// and resumes believing it leads, with its members' proposals buffered.
		time.Sleep(700 * time.Millisecond)
		l := c.AwaitLeader(10 * time.Second)
		if l < 0 {
			t.Fatal("no leader")
		}
		t.Logf("pausing the leader, member %d", l+1)
		stopProcess(t, c.Members[l])
		time.Sleep(1500 * time.Millisecond)
		continueProcess(t, c.Members[l])
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	})
}
