package quorum

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

// A connection's write applies only right after the one before it: a write whose
// predecessor was lost is refused (ErrOutOfOrder, a result of the apply, so every server
// refuses it alike), and changes
// nothing; a new connection of the session starts at 1.
func TestFSMAppliesAConnectionsWritesOnlyInOrder(t *testing.T) {
	const sid = 0x100
	create := func(path string, conn, seq uint64) *Entry {
		return &Entry{Session: sid, Op: jute.OpCreate, Origin: "1", Conn: conn, Seq: seq, Req: &jute.CreateRequest{Path: path, Acl: open}}
	}
	history := []*Entry{
		{Session: sid, Op: jute.OpCreateSession, Origin: "1", Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		create("/a", 7, 1),
		create("/c", 7, 3), // /b (seq 2) was lost: refused
		create("/b", 7, 2),
		create("/c", 7, 3),
		create("/x", 8, 2), // a new connection's first write must be 1
		create("/d", 8, 1),
		create("/e", 7, 4), // the old connection's later write after the new one's
		{Session: sid, Op: jute.OpSync, Origin: "1", Conn: 8, Seq: 2, Req: &jute.SyncRequest{Path: "/"}},
		{Session: sid, Op: jute.OpSync, Origin: "1", Conn: 8, Seq: 2, Req: &jute.SyncRequest{Path: "/"}}, // twice
		// A handler that checks no session (deleteContainer) still moves the cursor.
		{Session: sid, Op: jute.OpDeleteContainer, Origin: "1", Conn: 8, Seq: 3, Req: &jute.DeleteRequest{Path: "/none", Version: -1}},
		{Session: sid, Op: jute.OpCloseSession, Origin: "1", Conn: 8, Seq: 4},
	}
	want := []jute.Code{jute.OK, jute.OK, ErrOutOfOrder, jute.OK, jute.OK, ErrOutOfOrder, jute.OK, ErrOutOfOrder, jute.OK, ErrOutOfOrder, jute.ErrNoNode, jute.OK}
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	var got []jute.Code
	for _, r := range applyAll(t, f, history) {
		got = append(got, r.Err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("results %v\nwant    %v", got, want)
	}
	f.Read(func(tr *datatree.Tree, _ *session.Table) {
		for _, p := range []string{"/x", "/e"} {
			if _, _, code := tr.Get(p); code != jute.ErrNoNode {
				t.Fatalf("%s, refused, is in the tree", p)
			}
		}
	})
}

// An entry written by the previous version (type byte 1, no connection) still decodes;
// the current one round-trips with its connection and sequence.
func TestEntryFormats(t *testing.T) {
	e := &Entry{Session: 5, Cxid: 9, Time: 1234, Op: jute.OpDelete, Origin: "2", Conn: 77, Seq: 3,
		Req: &jute.DeleteRequest{Path: "/a", Version: -1}}
	got, err := UnmarshalEntry(e.Marshal())
	if err != nil || !reflect.DeepEqual(got, e) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	// Version 1: the same fields without Conn.
	enc := &jute.Encoder{}
	enc.Buf = append(enc.Buf, entryV1)
	enc.Long(5)
	enc.Int(9)
	enc.Long(1234)
	enc.Int(jute.OpDelete)
	enc.Bool(false)
	enc.String("2")
	enc.Long(3)
	enc.Int(0)
	(&jute.DeleteRequest{Path: "/a", Version: -1}).Encode(enc)
	old, err := UnmarshalEntry(enc.Buf)
	if err != nil || old.Conn != 0 || old.Seq != 3 || old.Origin != "2" || old.Req.(*jute.DeleteRequest).Path != "/a" {
		t.Fatalf("version 1: %+v, %v", old, err)
	}
	if _, err := UnmarshalEntry([]byte{3, 0}); err == nil {
		t.Fatal("an unknown type byte decoded")
	}
}

// A member applies the entries up to a commit notice from its own log, if it holds the
// noticed entry with the noticed term; raft's later Apply of them returns the same
// results without applying them again.
func TestApplyCommittedAheadOfRaft(t *testing.T) {
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	logs := raft.NewInmemStore()
	es := append(commandLogs(4), &raft.Log{Index: 5, Term: 2, Type: raft.LogBarrier})
	if err := logs.StoreLogs(es[:3]); err != nil {
		t.Fatal(err)
	}
	if f.applyCommitted(logs, 4, 2, nil, nil) {
		t.Fatal("applied up to an entry the log does not hold")
	}
	if f.applyCommitted(logs, 3, 1, nil, nil) || f.LastZxid() != 0 {
		t.Fatal("applied an entry whose term differs from the notice's")
	}
	if !f.applyCommitted(logs, 3, 2, nil, nil) || f.LastZxid() != 3 || f.EarlyApplied() != 3 {
		t.Fatalf("after the notice: zxid %d, early %d", f.LastZxid(), f.EarlyApplied())
	}
	before, _ := digest(f)
	for _, l := range es[:3] {
		r, ok := f.Apply(l).(*Result)
		if !ok || r.Zxid != int64(l.Index) || r.Err != jute.OK {
			t.Fatalf("raft's apply of %d after the notice: %+v", l.Index, r)
		}
	}
	if after, _ := digest(f); after != before {
		t.Fatal("raft's apply changed the state again")
	}
	logs.StoreLogs(es[3:])
	if !f.applyCommitted(logs, 5, 2, nil, nil) || f.LastZxid() != 4 {
		t.Fatalf("the next notice (ending on a barrier): zxid %d", f.LastZxid())
	}
	if r := f.Apply(es[3]).(*Result); r.Zxid != 4 {
		t.Fatalf("raft's apply of 4: %+v", r)
	}
	if len(f.early) != 0 {
		t.Fatalf("%d early results kept after raft caught up", len(f.early))
	}
}

// The peer wire's refusal codes map each sentinel error to a code and back.
func TestRefusalCodes(t *testing.T) {
	// The wire codes are fixed: members of one cluster read each other's.
	for _, r := range []struct {
		err  error
		code byte
	}{{raft.ErrNotLeader, 1}, {raft.ErrLeadershipLost, 2}, {raft.ErrRaftShutdown, 3}} {
		code, text := encodeRefusal(fmt.Errorf("wrapped: %w", r.err))
		if code != r.code || text != nil {
			t.Fatalf("%v encoded as %d %q", r.err, code, text)
		}
		if err := decodeRefusal(r.code, nil); !errors.Is(err, r.err) || !errors.Is(err, ErrNoLeader) {
			t.Fatalf("code %d decoded as %v", r.code, err)
		}
	}
	if !notAppended(decodeRefusal(refusedNotLeader, nil)) || notAppended(decodeRefusal(refusedLeadershipLost, nil)) {
		t.Fatal("only a refusal before appending is known not to be in the log")
	}
	errBoom := errors.New("boom")
	code, text := encodeRefusal(errBoom)
	if code != refusedOther || string(text) != errBoom.Error() {
		t.Fatalf("other error: %d %q", code, text)
	}
}

// slowDisk is a log store whose writes wait until released, as a long fsync does.
type slowDisk struct {
	*raft.InmemStore
	release chan struct{}
}

func (d *slowDisk) StoreLogs(es []*raft.Log) error {
	<-d.release
	return d.InmemStore.StoreLogs(es)
}

// slowCatchUp is a member's catch-up over a log on a slowDisk, its loop running until
// the test ends; term is the member's current term.
func slowCatchUp(t *testing.T, term func() uint64) (*FSM, *slowDisk, *noticedLogs, *catchUp) {
	t.Helper()
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	disk := &slowDisk{InmemStore: raft.NewInmemStore(), release: make(chan struct{})}
	logs := &noticedLogs{recentLogs: newRecentLogs(disk, 16, recentLogsMaxBytes)}
	lastStored := func() uint64 { i, _ := logs.recentLogs.LastIndex(); return i }
	catch := newCatchUp(f, writingOrStored{logs}, logs.recentLogs, term, lastStored)
	logs.arrived, logs.stored = catch.arrived, catch.stored
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go catch.run(done)
	return f, disk, logs, catch
}

// commandLogs are the first n of entries() as raft log entries of term 2, from index 1.
func commandLogs(n int) []*raft.Log {
	var es []*raft.Log
	for i, e := range entries()[:n] {
		es = append(es, &raft.Log{Index: uint64(i + 1), Term: 2, Type: raft.LogCommand, Data: e.Marshal()})
	}
	return es
}

// A member applies a noticed commit from the batch raft is still writing: it does not
// wait for its own fsync, whose time it would otherwise serve reads without the commit.
func TestNoticedCommitAppliedWhileItsEntryIsWritten(t *testing.T) {
	f, disk, logs, catch := slowCatchUp(t, func() uint64 { return 2 })
	es := commandLogs(3)
	catch.notice(commitPoint{index: 2, term: 2}) // before the entries arrive, as it may
	stored := make(chan error, 1)
	go func() { stored <- logs.StoreLogs(es) }()
	applied := f.WaitApplied(2, 5*time.Second)
	close(disk.release)
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	if !applied || f.LastZxid() != 2 {
		t.Fatalf("while the entries were written: zxid %d, want 2", f.LastZxid())
	}
	for _, l := range es {
		if r := f.Apply(l).(*Result); r.Zxid != int64(l.Index) || r.Err != jute.OK {
			t.Fatalf("raft's apply of %d: %+v", l.Index, r)
		}
	}
	if f.EarlyApplied() != 2 || f.LastZxid() != 3 {
		t.Fatalf("early %d, zxid %d", f.EarlyApplied(), f.LastZxid())
	}
}

// Entries read for a commit notice come from the recent-entries cache (shared with raft) or from
// bbolt (decoded); reading one into a raft.Log that still holds a cached entry's bytes
// would decode over them and corrupt the cache. A follower far behind reads the noticed
// (cached) entry first, then the older ones from the store: every entry must apply as
// written.
func TestApplyCommittedKeepsTheLogCacheIntact(t *testing.T) {
	store, err := persistence.Open(t.TempDir(), 1, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cache := newRecentLogs(store.Log, 4, recentLogsMaxBytes) // the newest 4 entries only
	// The noticed (newest, cached) entry is the largest, so an older one decoded into a
	// raft.Log still holding its bytes would fit, and overwrite them.
	history := append(entries(), &Entry{Session: 0x100, Op: jute.OpSetData, Time: 1011,
		Req: &jute.SetDataRequest{Path: "/a", Data: bytes.Repeat([]byte("z"), 1024), Version: -1}})
	var es []*raft.Log
	for i, e := range history {
		// From 3, as applyAll numbers them (zxids are in the stats).
		es = append(es, &raft.Log{Index: uint64(i + 3), Term: 1, Type: raft.LogCommand, Data: e.Marshal()})
	}
	if err := cache.StoreLogs(es); err != nil {
		t.Fatal(err)
	}
	early := NewFSM(datatree.Options{ExtendedTypes: true})
	early.appliedIndex.Store(2)
	if !early.applyCommitted(cache, es[len(es)-1].Index, 1, nil, nil) {
		t.Fatal("the noticed entries were not applied")
	}
	plain := NewFSM(datatree.Options{ExtendedTypes: true})
	applyAll(t, plain, history)
	if a, b := digestOf(early), digestOf(plain); a != b {
		t.Fatal("entries applied on a notice differ from the same entries applied by raft")
	}
	for _, want := range es {
		var got raft.Log
		if err := cache.GetLog(want.Index, &got); err != nil || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("entry %d changed in the log cache", want.Index)
		}
	}
}

func digestOf(f *FSM) uint64 { d, _ := digest(f); return d }
