package quorum

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// A member syncs once under each leader it knows before its first session, and again
// after a restart (while the cluster wrote without it) and after a leader change; once
// the sync returns, the member holds every write the cluster acknowledged before it.
func TestMemberSyncsWithEachLeader(t *testing.T) {
	peers := threePeers(t)
	dirs := map[string]string{}
	nodes := map[string]*Node{}
	for _, p := range peers {
		dirs[p.ID] = t.TempDir()
		nodes[p.ID] = openMember(t, p.ID, dirs[p.ID], peers)
	}
	defer func() {
		for _, n := range nodes {
			n.Close()
		}
	}()
	leader, follower := leaderAndFollowerOf(t, nodes)
	waitFor(t, "the follower to know its leader", follower.HasLeader)

	if !follower.SyncWithLeader() || !follower.SyncWithLeader() {
		t.Fatal("SyncWithLeader failed with a leader")
	}
	if got := follower.leaderSync.syncs.Load(); got != 1 {
		t.Fatalf("two calls under one leader made %d syncs, want 1", got)
	}

	// The follower stops; the others write on; it restarts from its data dir.
	id := follower.ID()
	follower.Close()
	delete(nodes, id)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	var last int64
	for i := 0; i < 200; i++ {
		r := propose(t, leader, &Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: fmt.Sprintf("/n%d", i), Data: []byte("x"), Acl: open}})
		if r.Err != jute.OK {
			t.Fatalf("create: %v", r.Err)
		}
		last = r.Zxid
	}
	follower = openMember(t, id, dirs[id], peers)
	nodes[id] = follower
	waitFor(t, "the restarted follower to know its leader", follower.HasLeader)
	if !follower.SyncWithLeader() {
		t.Fatal("SyncWithLeader failed after a restart")
	}
	if got := follower.FSM.LastZxid(); got < last {
		t.Fatalf("after the sync the restarted follower applied 0x%x, the last acknowledged write is 0x%x", got, last)
	}
	if !hasNode(follower, "/n199") {
		t.Fatal("after the sync the restarted follower lacks the last node written")
	}
	if got := follower.leaderSync.syncs.Load(); got != 1 {
		t.Fatalf("the restarted follower made %d syncs, want 1", got)
	}

	// The leader goes; under the next one the follower syncs again.
	closeLeader(nodes, leader)
	leaderOf(t, nodes)
	waitFor(t, "the follower to know the new leader", func() bool {
		lid, ok := follower.LeaderID()
		return ok && lid != leader.ID()
	})
	if !follower.SyncWithLeader() {
		t.Fatal("SyncWithLeader failed under the new leader")
	}
	if got := follower.leaderSync.syncs.Load(); got != 2 {
		t.Fatalf("after a leader change the follower made %d syncs in all, want 2", got)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasNode(n *Node, path string) (ok bool) {
	n.FSM.Read(func(tr *datatree.Tree, _ *session.Table) {
		_, code := tr.Stat(path)
		ok = code == jute.OK
	})
	return ok
}

// Callers that queue behind a sync that fails fail with it (no sync each); the next
// caller tries again; a leader change asks for a new sync.
func TestLeaderSyncQueuedCallersShareTheOutcome(t *testing.T) {
	var l leaderSync
	l.leaderChanged()
	release := make(chan bool)
	var calls atomic.Int32
	sync := func() bool {
		calls.Add(1)
		select {
		case ok := <-release:
			return ok
		case <-time.After(5 * time.Second):
			return false
		}
	}
	results := make(chan bool, 4)
	go func() { results <- l.run(sync) }()
	waitFor(t, "the first sync to start", func() bool { return calls.Load() == 1 })
	started := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() {
			started <- struct{}{}
			results <- l.run(sync)
		}()
	}
	for i := 0; i < 3; i++ {
		<-started
	}
	time.Sleep(50 * time.Millisecond) // let them queue on the lock
	release <- false
	for i := 0; i < 4; i++ {
		if <-results {
			t.Fatal("a caller succeeded although the only sync failed")
		}
	}
	if got := calls.Load(); got != 1 {
		t.Fatalf("callers queued behind a failed sync ran %d syncs, want 1", got)
	}

	go func() { release <- true }()
	if !l.run(sync) || calls.Load() != 2 {
		t.Fatalf("a later caller did not sync again (%d syncs)", calls.Load())
	}
	if !l.run(sync) || calls.Load() != 2 {
		t.Fatalf("a caller under the same leader synced again (%d syncs)", calls.Load())
	}
	l.leaderChanged()
	go func() { release <- true }()
	if !l.run(sync) || calls.Load() != 3 {
		t.Fatalf("no new sync after a leader change (%d syncs)", calls.Load())
	}
}
