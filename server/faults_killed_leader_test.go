package server

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// A leader killed (SIGKILL) is replaced within an election, not after the followers'
// heartbeat timeout: its ports refuse connections at once, and a follower that finds so
// stands for election (quorum's prompt election), as a ZooKeeper follower starts one
// when its connection to the leader closes. tickTime is 8 s here, so a follower that
// waited for missed heartbeats would stand no sooner than 2.4 s after the kill (a
// timeout of half a tick after the last heartbeat, at most a fifth of a tick before).
func TestFaultKilledLeaderReplacedWithinAnElection(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"tickTime": "8000"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	l := c.Leader()
	if l < 0 {
		t.Fatal("no leader")
	}
	var survivors []string
	for i, m := range c.Members {
		if i != l {
			survivors = append(survivors, m.Addr)
		}
	}
	conn, _ := faultSession(t, 16*time.Second, survivors...)
	if _, err := conn.Create("/before", []byte("kept"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Members[l].Kill()
	killed := time.Now()
	next := -1
	for next < 0 && time.Since(killed) < 20*time.Second {
		time.Sleep(10 * time.Millisecond)
		next = c.Leader()
	}
	took := time.Since(killed)
	if next < 0 {
		t.Fatalf("no leader after the kill\n%s", c.LogTails())
	}
	t.Logf("member %d killed; member %d leads %v later", l+1, next+1, took)
	if took > 2*time.Second {
		t.Fatalf("a new leader only %v after the leader was killed\n%s", took, c.LogTails())
	}
	if _, err := conn.Create("/after", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if data, _, err := conn.Get("/before"); err != nil || string(data) != "kept" {
		t.Fatalf("/before = %q, %v after the election", data, err)
	}
}
