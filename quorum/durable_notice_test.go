package quorum

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// A durable notice lets a follower apply only entries its own log has stored (durable),
// of the notice's term, while that term is its current one, and never past the leader's
// durable point.
func TestDurableNoticeAppliesOnlyDurableEntriesOfTheCurrentTerm(t *testing.T) {
	var term atomic.Uint64
	term.Store(2)
	f, disk, logs, catch := slowCatchUp(t, term.Load)
	es := commandLogs(6)
	store := func(batch []*raft.Log) {
		t.Helper()
		stored := make(chan error, 1)
		go func() { stored <- logs.StoreLogs(batch) }()
		disk.release <- struct{}{}
		if err := <-stored; err != nil {
			t.Fatal(err)
		}
	}
	store(es[:3])

	// The notice of an earlier term says nothing about this term's entries.
	catch.leaderDurable(commitPoint{index: 3, term: 1})
	if f.LastZxid() != 0 {
		t.Fatalf("applied on an earlier term's notice: zxid %d", f.LastZxid())
	}
	// This term's: up to the lower of the leader's point and this member's last entry.
	catch.leaderDurable(commitPoint{index: 2, term: 2})
	if f.LastZxid() != 2 || f.DurableApplied() != 2 {
		t.Fatalf("after the notice of 2: zxid %d, durable-applied %d", f.LastZxid(), f.DurableApplied())
	}
	catch.leaderDurable(commitPoint{index: 5, term: 2})
	if f.LastZxid() != 3 {
		t.Fatalf("after the notice of 5 with 3 stored: zxid %d, want 3", f.LastZxid())
	}

	// Entries still being written (their fdatasync not returned) are not applied on it:
	// only one copy would be durable. Once stored, they are, up to the leader's point.
	stored := make(chan error, 1)
	go func() { stored <- logs.StoreLogs(es[3:]) }()
	time.Sleep(50 * time.Millisecond)
	catch.leaderDurable(commitPoint{index: 5, term: 2})
	if f.LastZxid() != 3 {
		t.Fatalf("applied entries not yet durable here: zxid %d", f.LastZxid())
	}
	disk.release <- struct{}{}
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	if !f.WaitApplied(5, 5*time.Second) || f.LastZxid() != 5 {
		t.Fatalf("after the store: zxid %d, want 5 (the leader's point, not 6)", f.LastZxid())
	}

	// A member whose term moved on applies nothing more on the old term's notices, and a
	// notice whose term its entry does not have applies nothing either.
	term.Store(3)
	catch.leaderDurable(commitPoint{index: 6, term: 2})
	catch.leaderDurable(commitPoint{index: 6, term: 3})
	time.Sleep(50 * time.Millisecond)
	if f.LastZxid() != 5 || f.DurableApplied() != 5 {
		t.Fatalf("after notices of another term: zxid %d, durable-applied %d", f.LastZxid(), f.DurableApplied())
	}
}

func TestThreeVoters(t *testing.T) {
	conf := func(suffrage ...raft.ServerSuffrage) raft.Configuration {
		var c raft.Configuration
		for i, s := range suffrage {
			c.Servers = append(c.Servers, raft.Server{ID: raft.ServerID(rune('1' + i)), Suffrage: s})
		}
		return c
	}
	v, o := raft.Voter, raft.Nonvoter
	for _, c := range []struct {
		conf raft.Configuration
		a, b string
		want bool
	}{
		{conf(v, v, v), "1", "2", true},
		{conf(v, v, v), "1", "1", false},
		{conf(v, v, v, o), "1", "3", true},
		{conf(v, v, v, o), "1", "4", false}, // an observer
		{conf(v, v, v, v, v), "1", "2", false},
		{conf(v, v), "1", "2", false},
		{conf(v, v, v), "1", "9", false},
	} {
		if got := threeVoters(c.conf, c.a, c.b); got != c.want {
			t.Errorf("%v %s %s: %v, want %v", c.conf.Servers, c.a, c.b, got, c.want)
		}
	}
}

// noticeCluster starts members whose leader sends no commit notices, and whose raft
// tells a follower of a commit only with the next entry (CommitTimeout far off), so a
// follower applies a lone write early only on a durable notice. Stopped at the end.
func noticeCluster(t *testing.T, members int) map[string]*Node {
	t.Helper()
	var peers []Peer
	for i := range members {
		peers = append(peers, Peer{ID: string(rune('1' + i)), RaftAddr: freeAddr(t), PeerAddr: freeAddr(t)})
	}
	return openMembersWith(t, peers, func(_ Peer, cfg *Config) {
		cfg.CommitTimeout = time.Minute
		cfg.noCommitNotices = true
		// A leadership that moves while a write is proposed (100 ms timeouts lose it on a
		// loaded machine) leaves that write waiting, on the member it went through, for
		// raft's next AppendEntries: a minute here, past the session's timeout.
		cfg.HeartbeatTimeout = 500 * time.Millisecond
	})
}

// writeOneByOne proposes count creates on the leader, each once the one before it is
// applied everywhere (or the wait times out), and returns the leader.
func writeOneByOne(t *testing.T, nodes map[string]*Node, count int, wait time.Duration) (*Node, bool) {
	t.Helper()
	leader := leaderOf(t, nodes)
	sid := int64(0x77)
	propose(t, leader, &Entry{Session: sid, Op: jute.OpCreateSession, Time: 1, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	all := true
	for i := range count {
		r := propose(t, leader, &Entry{Session: sid, Op: jute.OpCreate, Time: 2,
			Req: &jute.CreateRequest{Path: fmt.Sprintf("/d%d", i), Acl: open}})
		if r.Err != jute.OK {
			t.Fatalf("create %d: %v", i, r.Err)
		}
		for _, n := range nodes {
			all = n.FSM.WaitApplied(r.Zxid, wait) && all
		}
	}
	return leader, all
}

// In a three-voter cluster a follower applies a write on the leader's durable notice,
// which its fdatasync sends: with the leader's own apply held (so it sends no commit
// notice and wakes no stream on an apply), no commit notices at all, and raft's commit
// news held back until the next entry, each lone write still reaches both followers
// before the leader applies it.
func TestFollowersApplyOnDurableNotices(t *testing.T) {
	nodes := noticeCluster(t, 3)
	leader, all := writeOneByOne(t, nodes, 1, 10*time.Second)
	if !all {
		t.Fatal("the session was not applied everywhere")
	}
	for i := range 5 {
		leader.FSM.applyMu.Lock()
		before := leader.FSM.LastZxid()
		f := leader.Propose(&Entry{Session: 0x77, Op: jute.OpCreate, Time: 3,
			Req: &jute.CreateRequest{Path: fmt.Sprintf("/held%d", i), Acl: open}})
		for id, n := range nodes {
			if n != leader && !n.FSM.WaitApplied(before+1, 10*time.Second) {
				t.Errorf("write %d: follower %s did not apply it while the leader's apply was held", i, id)
			}
		}
		leader.FSM.applyMu.Unlock()
		if err := f.Error(); err != nil {
			t.Fatal(err)
		}
	}
	for id, n := range nodes {
		if n == leader {
			continue
		}
		if d := n.FSM.DurableApplied(); d < 5 {
			t.Errorf("follower %s applied %d commands on durable notices, want at least 5", id, d)
		}
	}
}

// With five voters a leader and one follower are not a majority: no durable notice is
// sent, and a follower applies a lone write only once raft says it is committed.
func TestNoDurableNoticesWithFiveVoters(t *testing.T) {
	nodes := noticeCluster(t, 5)
	_, all := writeOneByOne(t, nodes, 2, 300*time.Millisecond)
	if all {
		t.Error("every follower applied every lone write without a commit notice or raft's commit news")
	}
	for id, n := range nodes {
		if d := n.FSM.DurableApplied(); d != 0 {
			t.Errorf("member %s applied %d commands on durable notices with five voters", id, d)
		}
	}
}

// A follower that stored a write and was sent a durable notice for it applies it on its
// own, so the leader leaves the write's commit notice out of that follower's stream: the
// follower whose answer made the write committed gets none. Every follower still applies
// every lone write at once, with raft's commit news held back until the next entry (a
// follower left without a notice it needed would wait for it), so the notices left out
// were not needed. (A follower that has not answered yet still gets the notice:
// TestAFollowerAppliesWhatItReceivedBeforeRaftStoresIt.)
func TestALeaderSkipsTheCommitNoticesAFollowerDoesNotNeed(t *testing.T) {
	nodes := openMembersWith(t, threePeers(t), func(_ Peer, cfg *Config) {
		cfg.CommitTimeout = time.Minute
		cfg.HeartbeatTimeout = 500 * time.Millisecond
	})
	const writes = 20
	leader, all := writeOneByOne(t, nodes, writes, 2*time.Second)
	if !all {
		t.Fatal("a follower did not apply every lone write within 2 s")
	}
	if s := leader.noticesSkipped.Load(); s < writes {
		t.Errorf("the leader left out %d commit notices for %d writes, want at least %d", s, writes, writes)
	}
}
