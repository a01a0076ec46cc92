package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// In a cluster a client's writes are audited by the member holding its connection (a
// follower here), and a closed session's ephemeral deletions by every member, as each
// ZooKeeper member audits what its DataTree deletes.
func TestClusterAuditsWhereZooKeeperDoes(t *testing.T) {
	bufs := make([]*lockedBuffer, 3)
	logs := make([]*slog.Logger, 3)
	for i := range logs {
		bufs[i] = &lockedBuffer{}
		logs[i] = slog.New(slog.NewTextHandler(bufs[i], &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	tc := newTestClusterLogged(t, 3, func(c *Config) { c.Audit = true }, nil, logs)
	f := tc.follower()
	c := zkSession(t, 10*time.Second, tc.addr(f))
	if _, err := c.Create("/audited", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	tc.converge()
	count := func(i int, what string) int { return strings.Count(bufs[i].String(), what) }
	const created = "operation=create znode=/audited znode_type=ephemeral result=success"
	const deleted = "operation=ephemeralZNodeDeletionOnSessionCloseOrExpire znode=/audited result=success"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		all := true
		for i := range bufs {
			all = all && count(i, deleted) == 1
		}
		if all || time.Now().After(deadline) {
			break
		}
	}
	for i := range bufs {
		wantCreated := 0
		if i == f {
			wantCreated = 1
		}
		if got := count(i, created); got != wantCreated {
			t.Errorf("member %d audited the create %d times, want %d", i+1, got, wantCreated)
		}
		if got := count(i, deleted); got != 1 {
			t.Errorf("member %d audited the ephemeral's deletion %d times, want 1", i+1, got)
		}
		if got := count(i, "operation=serverStart"); got != 1 {
			t.Errorf("member %d audited its start %d times", i+1, got)
		}
	}
	if t.Failed() {
		for i, b := range bufs {
			t.Logf("member %d's log:\n%s", i+1, b.String())
		}
	}
}
