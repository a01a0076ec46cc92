package quorum

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

var open = []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}

// entries is a small history touching every entry kind: sessions, creates of each
// kind, a multi that fails, a delete, and a session close that removes ephemerals.
func entries() []*Entry {
	const s1, s2 = 0x100, 0x200
	return []*Entry{
		{Session: s1, Op: jute.OpCreateSession, Time: 1000, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		{Session: s2, Op: jute.OpCreateSession, Time: 1001, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		{Session: s1, Op: jute.OpCreate, Time: 1002, Req: &jute.CreateRequest{Path: "/a", Data: []byte("x"), Acl: open}},
		{Session: s1, Op: jute.OpCreate, Time: 1003, Req: &jute.CreateRequest{Path: "/a/s-", Acl: open, Flags: jute.FlagPersistentSequential}},
		{Session: s2, Op: jute.OpCreate2, Time: 1004, Req: &jute.CreateRequest{Path: "/a/e", Acl: open, Flags: jute.FlagEphemeral}},
		{Session: s1, Op: jute.OpCreateContainer, Time: 1005, Req: &jute.CreateRequest{Path: "/c", Acl: open, Flags: jute.FlagContainer}},
		{Session: s1, Op: jute.OpCreateTTL, Time: 1006, Req: &jute.CreateTTLRequest{Path: "/t", Acl: open, Flags: jute.FlagPersistentWithTTL, Ttl: 500}},
		{Session: s1, Op: jute.OpMulti, Time: 1007, Req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m", Acl: open}},
			{Type: jute.OpDelete, Req: &jute.DeleteRequest{Path: "/nope", Version: -1}}}}},
		{Session: s1, Op: jute.OpSetData, Time: 1008, Req: &jute.SetDataRequest{Path: "/a", Data: []byte("y"), Version: 0}},
		{Session: s2, Op: jute.OpCloseSession, Time: 1009},
		{Session: s2, Op: jute.OpSetData, Time: 1010, Req: &jute.SetDataRequest{Path: "/a", Version: -1}},
	}
}

func applyAll(t *testing.T, f *FSM, es []*Entry) []*Result {
	t.Helper()
	var out []*Result
	for _, e := range es {
		// Through the encoding, as every entry reaches Apply from the log, after the
		// entries already applied (from 3 on a fresh FSM, as after raft's first two).
		r := f.Apply(&raft.Log{Index: max(f.appliedIndex.Load(), 2) + 1, Type: raft.LogCommand, Data: e.Marshal()})
		out = append(out, r.(*Result))
	}
	return out
}

func digest(f *FSM) (d uint64, n int) {
	f.Read(func(t *datatree.Tree, s *session.Table) { d, n = t.Digest(), s.Len() })
	return
}

func TestApplyResults(t *testing.T) {
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	res := applyAll(t, f, entries())
	want := []jute.Code{jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.OK, jute.ErrSessionExpired}
	for i, r := range res {
		if r.Err != want[i] {
			t.Errorf("entry %d: %v, want %v", i, r.Err, want[i])
		}
		if r.Zxid != int64(i+3) {
			t.Errorf("entry %d: zxid %d, want the log index %d", i, r.Zxid, i+3)
		}
	}
	m := res[7].Resp.(*jute.MultiResponse)
	if len(m.Results) != 2 || m.Results[0].Err != jute.OK || m.Results[1].Err != jute.ErrNoNode {
		t.Errorf("failed multi results: %+v", m.Results)
	}
	f.Read(func(tr *datatree.Tree, s *session.Table) {
		if _, _, code := tr.Get("/a/e"); code != jute.ErrNoNode {
			t.Errorf("ephemeral of closed session: %v", code)
		}
		if _, _, code := tr.Get("/m"); code != jute.ErrNoNode {
			t.Errorf("failed multi left /m: %v", code)
		}
		if s.Len() != 1 {
			t.Errorf("sessions: %d, want 1", s.Len())
		}
	})
}

// The same entries give the same state on every replica.
func TestApplyIsDeterministic(t *testing.T) {
	a, b := NewFSM(datatree.Options{ExtendedTypes: true}), NewFSM(datatree.Options{ExtendedTypes: true})
	applyAll(t, a, entries())
	applyAll(t, b, entries())
	da, na := digest(a)
	db, nb := digest(b)
	if da != db || na != nb {
		t.Fatalf("replicas differ: %x/%d vs %x/%d", da, na, db, nb)
	}
}

type sink struct {
	bytes.Buffer
}

func (s *sink) ID() string    { return "test" }
func (s *sink) Cancel() error { return nil }
func (s *sink) Close() error  { return nil }

// snapshotOf is a snapshot of f's state, as Persist writes it.
func snapshotOf(t *testing.T, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var s sink
	if err := snap.Persist(&s); err != nil {
		t.Fatal(err)
	}
	return s.Bytes()
}

// snapshotReader hands a snapshot to Restore.
func snapshotReader(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

func TestSnapshotRestore(t *testing.T) {
	a := NewFSM(datatree.Options{ExtendedTypes: true})
	applyAll(t, a, entries())
	s := snapshotOf(t, a)
	b := NewFSM(datatree.Options{ExtendedTypes: true})
	if err := b.Restore(snapshotReader(s)); err != nil {
		t.Fatal(err)
	}
	da, na := digest(a)
	db, nb := digest(b)
	if da != db || na != nb || a.LastZxid() != b.LastZxid() {
		t.Fatalf("restored state differs: %x/%d/%d vs %x/%d/%d", da, na, a.LastZxid(), db, nb, b.LastZxid())
	}
	bad := append([]byte(nil), s...)
	bad[len(bad)/2] ^= 0xff
	if err := NewFSM(datatree.Options{}).Restore(snapshotReader(bad)); err == nil {
		t.Fatal("a damaged snapshot was restored")
	}
}

func TestUndecodableEntryPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Apply accepted an entry it cannot decode")
		}
	}()
	NewFSM(datatree.Options{}).Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: []byte{9, 9}})
}

// Writing and installing a snapshot are long work (Config.LongWork): each is reported
// as it starts and ends, the end after the last byte and after the tree was thawed.
func TestSnapshotsAreReportedAsLongWork(t *testing.T) {
	var running, started int
	var atEnd func()
	longWork := func() func() {
		running++
		started++
		return func() {
			running--
			if atEnd != nil {
				atEnd()
			}
		}
	}
	a := NewFSM(datatree.Options{ExtendedTypes: true})
	a.longWork = longWork
	thawed := false
	atEnd = func() {
		// A tree still frozen refuses another snapshot (datatree.ErrFrozen).
		if again, err := a.Snapshot(); err == nil {
			thawed = true
			again.Release()
		}
	}
	applyAll(t, a, entries())
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var s sink
	var during int
	if err := snap.Persist(&reportingSink{sink: &s, write: func() { during = max(during, running) }}); err != nil {
		t.Fatal(err)
	}
	if started != 1 || running != 0 || during != 1 || !thawed {
		t.Fatalf("writing: %d started, %d still running, %d running during the writes, thawed at the end %v; want 1, 0, 1, true",
			started, running, during, thawed)
	}
	atEnd = nil
	b := NewFSM(datatree.Options{ExtendedTypes: true})
	b.longWork = longWork
	if err := b.Restore(snapshotReader(s.Bytes())); err != nil {
		t.Fatal(err)
	}
	if started != 2 || running != 0 {
		t.Fatalf("installing: %d started, %d still running; want 2, 0", started, running)
	}
}

// reportingSink calls write on every write to its sink.
type reportingSink struct {
	*sink
	write func()
}

func (r *reportingSink) Write(b []byte) (int, error) {
	r.write()
	return r.sink.Write(b)
}
