package quorum

import (
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A standalone node leads without waiting out a heartbeat timeout: with its first
// timeouts at an hour, only electAtOnce can make it stand for election within the wait.
// (The lease itself, set in transport, is not in raft's ReloadableConfig to check here.)
func TestAStandaloneNodeElectsItselfAtOnce(t *testing.T) {
	if standaloneFirstTimeout <= standaloneLease {
		t.Fatalf("first timeout %v not above the lease %v: lowering it would not re-arm raft's timer", standaloneFirstTimeout, standaloneLease)
	}
	defer func(d time.Duration) { standaloneFirstTimeout = d }(standaloneFirstTimeout)
	standaloneFirstTimeout = time.Hour
	n, err := Open(DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := n.WaitLeader(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	rc := n.raft.ReloadableConfig()
	if rc.HeartbeatTimeout != standaloneLease || rc.ElectionTimeout != standaloneLease {
		t.Fatalf("timeouts %v / %v after the election, want %v", rc.HeartbeatTimeout, rc.ElectionTimeout, standaloneLease)
	}
	propose(t, n, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	if r := propose(t, n, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/a", Acl: open}}); r.Err != jute.OK {
		t.Fatalf("create: %v", r.Err)
	}
}
