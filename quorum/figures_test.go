package quorum

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// A member counts one look per stretch without a leader, and a voter one election when
// it knows its leader again; a non-voter counts the looks only.
func TestLookingCountsStretchesWithoutALeader(t *testing.T) {
	var looks, elections int
	figs := Figures{Looking: func() { looks++ }, Elected: func(took time.Duration) {
		if took < 0 {
			t.Errorf("election took %v", took)
		}
		elections++
	}}
	voter := &looking{voter: true, figs: figs}
	voter.found() // a leader already known: nothing to end
	voter.lost()
	voter.lost() // still the same stretch
	voter.found()
	voter.found()
	voter.lost()
	voter.found()
	if looks != 2 || elections != 2 {
		t.Errorf("voter: %d looks, %d elections; want 2 and 2", looks, elections)
	}
	looks, elections = 0, 0
	observer := &looking{figs: figs}
	observer.lost()
	observer.found()
	if looks != 1 || elections != 0 {
		t.Errorf("non-voter: %d looks, %d elections; want 1 and 0", looks, elections)
	}
	(&looking{voter: true}).lost() // no hooks: nothing to call
}

// A member serves again once per look: a follower when synced with the leader it knows
// (the time since it knew it is its sync), a leader when established; a call while no
// leader is known, or a second one, counts nothing.
func TestServingCountsOncePerLook(t *testing.T) {
	type call struct {
		leading    bool
		took, down time.Duration
	}
	var calls []call
	l := &looking{voter: true, figs: Figures{Serving: func(leading bool, took, down time.Duration) {
		calls = append(calls, call{leading, took, down})
	}}}
	l.lost()
	l.serving(false) // no leader known yet
	time.Sleep(2 * time.Millisecond)
	l.found()
	l.serving(false)
	l.serving(false)
	l.serving(true)
	l.lost()
	l.found()
	l.serving(true)
	if len(calls) != 2 {
		t.Fatalf("calls %+v, want 2", calls)
	}
	if c := calls[0]; c.leading || c.took < 0 || c.down < 2*time.Millisecond || c.took > c.down {
		t.Errorf("follower's call %+v", c)
	}
	if c := calls[1]; !c.leading || c.took != 0 || c.down < 0 {
		t.Errorf("leader's call %+v", c)
	}
	var none *looking
	none.serving(true) // a standalone server has none
}

// The startup replay counts the transactions of the log at Open after the snapshot (not
// a sync, nor zkraft's own entries) once they are applied, and lastCommandAfter finds the
// last command past the snapshot.
func TestStartupReplayCountsTheLogAfterTheSnapshot(t *testing.T) {
	store := raft.NewInmemStore()
	cmd := func(i uint64, op int32) *raft.Log {
		return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: (&Entry{Op: op, Req: &jute.SyncRequest{Path: "/"}}).Marshal()}
	}
	logs := []*raft.Log{{Index: 1, Term: 1, Type: raft.LogConfiguration}, cmd(2, jute.OpCreate), cmd(3, jute.OpSync),
		cmd(4, OpSetConfig), cmd(5, jute.OpSetData), {Index: 6, Term: 2, Type: raft.LogNoop}}
	if err := store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if got := lastCommandAfter(store, 0); got != 5 {
		t.Errorf("last command after 0: %d, want 5", got)
	}
	if got := lastCommandAfter(store, 5); got != 0 {
		t.Errorf("last command after 5: %d, want 0", got)
	}
	var got []int
	r := &startupReplay{snap: time.Millisecond, done: func(snap, txns time.Duration, n int) {
		if snap != time.Millisecond || txns < 0 {
			t.Errorf("snap %v, txns %v", snap, txns)
		}
		got = append(got, n)
	}}
	es := make([]*Entry, len(logs))
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			es[i], _ = UnmarshalEntry(l.Data)
		}
	}
	if r.applied(logs[:3], es[:3], 5) || len(got) != 0 {
		t.Fatalf("done before the last command: %v", got)
	}
	if !r.applied(logs[3:], es[3:], 5) || len(got) != 1 || got[0] != 2 {
		t.Errorf("done with %v, want [2] (the create and the setData)", got)
	}
}

// A snapshot a member installs ends its startup replay with what it applied so far,
// and the replayed transactions are not counted as commits (Figures.Committed).
func TestStartupReplayEndsAtAnInstalledSnapshot(t *testing.T) {
	src := NewFSM(datatree.Options{ExtendedTypes: true})
	applyAll(t, src, entries())
	snap := snapshotOf(t, src)

	f := NewFSM(datatree.Options{ExtendedTypes: true})
	var loaded []int
	// The log at the start ended far beyond what arrives before the snapshot.
	f.replay = &startupReplay{done: func(_, _ time.Duration, n int) { loaded = append(loaded, n) }}
	f.replayed = 1 << 20
	var committed int
	f.committedTxn, f.role = func(Role, int64) { committed++ }, func() Role { return Learner }
	applyAll(t, f, entries()[:3])
	if len(loaded) != 0 || committed != 0 {
		t.Fatalf("before the snapshot: loaded %v, committed %d; want none and none", loaded, committed)
	}
	if err := f.Restore(snapshotReader(snap)); err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 1 || loaded[0] != 3 || f.replay != nil {
		t.Errorf("loaded %v after the snapshot, want [3]", loaded)
	}
	// Past the replayed entries, a transaction counts.
	f.replayed = 0
	applyAll(t, f, entries()[3:4])
	if committed != 1 {
		t.Errorf("committed %d after the replay, want 1", committed)
	}
}

// A follower that holds its leader's term already (restarted within it) is found to
// serve by checkServing, which nothing stored told it.
func TestCheckServingFindsAFollowerSynced(t *testing.T) {
	servedBy := map[string]chan bool{}
	nodes := openMembersWith(t, threePeers(t), func(p Peer, c *Config) {
		served := make(chan bool, 8)
		servedBy[p.ID] = served
		c.Figures.Serving = func(leading bool, _, _ time.Duration) { served <- leading }
	})
	_, follower := leaderAndFollowerOf(t, nodes)
	served := servedBy[follower.cfg.ID]
	if !waitUntil(10*time.Second, follower.Synced) {
		t.Fatal("the follower did not sync")
	}
	for len(served) > 0 {
		<-served
	}
	// Its next stretch: it knows the leader again at once, and stores nothing new.
	follower.look.lost()
	follower.look.found()
	follower.checkServing() // the ping loop may have come first: it calls the same
	awaitServingAsFollower(t, served, "checkServing did not find the synced follower serving")
}

// awaitServingAsFollower waits for Figures.Serving's next call, which must be a
// follower's; missing says what its absence means.
func awaitServingAsFollower(t *testing.T, served <-chan bool, missing string) {
	t.Helper()
	select {
	case leading := <-served:
		if leading {
			t.Error("a follower counted as serving as a leader")
		}
	case <-time.After(5 * time.Second):
		t.Error(missing)
	}
}
