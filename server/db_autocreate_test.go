package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// zookeeper.db.autocreate=false: a member whose store was lost (started again on an
// empty data dir) takes part in no election until it has synced with a leader. With
// the only other running member it would elect that one; gated, it refuses its votes and
// nobody leads until a member with data is back; then it syncs and votes again.
func TestEmptyStoreWithoutDBAutocreateVotesOnlyOnceSynced(t *testing.T) {
	tc := newTestClusterWith(t, 3, nil)
	l := tc.leader()
	f := tc.follower()
	g := 3 - l - f
	c := dial(t, tc.addr(l))
	c.connect(0, nil)
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/kept", Data: []byte("v"), Acl: openACL}, &jute.CreateResponse{}); h.Err != 0 {
		t.Fatal(h.Err)
	}
	tc.converge()
	tc.stop(f)
	if err := os.RemoveAll(tc.cfgs[f].DataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tc.cfgs[f].DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	tc.cfgs[f].NoDBAutocreate = true
	tc.stop(l)
	defer func(d time.Duration) { firstLeaderWait = d }(firstLeaderWait)
	firstLeaderWait = time.Second // it finds none
	tc.start(f)
	time.Sleep(3 * time.Second) // many election timeouts of member g (a tick of 200 ms)
	if tc.servers[g].node.IsLeader() {
		t.Fatal("the member with data was elected by the vote of the member that lost its store")
	}
	if shut, refused := tc.servers[f].node.VotesWithheld(); !shut || refused == 0 {
		t.Fatalf("the member on an empty store: votes withheld %v, %d refused", shut, refused)
	}
	tc.start(l)
	tc.leader()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		shut, _ := tc.servers[f].node.VotesWithheld()
		code := jute.ErrNoNode
		tc.servers[f].node.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { _, code = tr.Stat("/kept") })
		if !shut && code == jute.OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the member on an empty store did not sync: votes withheld %v, /kept: %v", shut, code)
		}
	}
}

// The data dir's "initialize" marker (zkServer-initialize.sh) makes a start trust an
// empty store whatever zookeeper.db.autocreate says, and is consumed by it.
func TestInitializeMarkerTrustsAnEmptyStore(t *testing.T) {
	for _, c := range []struct {
		noAutocreate, marker, distrust bool
	}{
		{false, false, false}, {true, false, true}, {true, true, false}, {false, true, false},
	} {
		cfg := Config{DataDir: t.TempDir(), NoDBAutocreate: c.noAutocreate}
		marker := filepath.Join(cfg.DataDir, "initialize")
		if c.marker {
			if err := os.WriteFile(marker, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got := cfg.distrustEmptyStore(slog.Default()); got != c.distrust {
			t.Errorf("db.autocreate=%v, marker %v: distrust %v", !c.noAutocreate, c.marker, got)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("db.autocreate=%v: the marker was left", !c.noAutocreate)
		}
	}
}
