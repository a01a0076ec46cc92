package quorum

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/watch"
)

// history is a log as a member holds it: raft's own entries (configurations, a no-op, a
// barrier) between the commands of entries() and more than applyHold writes of one
// connection, one of them out of its connection's order.
func history() []*raft.Log {
	conf := raft.EncodeConfiguration(raft.Configuration{Servers: []raft.Server{{ID: "1", Address: "a", Suffrage: raft.Voter}}})
	logs := []*raft.Log{{Type: raft.LogConfiguration, Data: conf}, {Type: raft.LogNoop}}
	for i, e := range entries() {
		logs = append(logs, &raft.Log{Type: raft.LogCommand, Data: e.Marshal()})
		if i == 4 {
			logs = append(logs, &raft.Log{Type: raft.LogBarrier})
		}
	}
	logs = append(logs, &raft.Log{Type: raft.LogConfiguration, Data: conf})
	for seq := uint64(1); seq <= 2*applyHold; seq++ {
		e := &Entry{Session: 0x100, Op: jute.OpSetData, Time: 2000 + int64(seq), Conn: 9, Seq: seq,
			Req: &jute.SetDataRequest{Path: "/a", Data: []byte{byte(seq)}, Version: -1}}
		logs = append(logs, &raft.Log{Type: raft.LogCommand, Data: e.Marshal()})
		if seq == applyHold+3 { // another connection's write, whose first was lost
			e.Conn, e.Seq = 10, 2
			logs = append(logs, &raft.Log{Type: raft.LogCommand, Data: e.Marshal()})
		}
	}
	for i, l := range logs {
		l.Index, l.Term = uint64(i+1), 1
	}
	return logs
}

// sent is what raft hands the FSM of a log: commands and configurations, no no-ops or
// barriers (fsm.go, runFSM).
func sent(logs []*raft.Log) []*raft.Log {
	var out []*raft.Log
	for _, l := range logs {
		if l.Type == raft.LogCommand || l.Type == raft.LogConfiguration {
			out = append(out, l)
		}
	}
	return out
}

// recorder is a watcher that keeps what it is told.
type recorder struct{ got []string }

func (r *recorder) Notify(ev *jute.WatcherEvent, zxid int64) {
	r.got = append(r.got, fmt.Sprintf("%s %d %d", ev.Path, ev.Type, zxid))
}

func watched() (*FSM, *recorder) {
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	w := &recorder{}
	f.Watches.Add(w, "/a", watch.PersistentRecursive)
	return f, w
}

// Raft's batches, some of whose entries a commit notice let the member apply already,
// give every entry the response, and the state and watch events, that applying the
// entries one by one gives; no entry is applied twice.
func TestApplyBatchMatchesOneByOne(t *testing.T) {
	logs := history()
	one, oneSaw := watched()
	want := map[uint64]interface{}{}
	for _, l := range sent(logs) {
		want[l.Index] = one.Apply(l)
	}

	batched, batchedSaw := watched()
	store := raft.NewInmemStore()
	if err := store.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	const noticed = 20 // a notice ahead of raft: the first batches are partly applied
	if !batched.applyCommitted(store, noticed, 1, nil, nil) {
		t.Fatal("the noticed entries were not applied")
	}
	got := map[uint64]interface{}{}
	rest := sent(logs)
	for _, n := range []int{1, 4, 12, applyHold + 7, len(rest)} {
		n = min(n, len(rest))
		out := batched.ApplyBatch(rest[:n])
		if len(out) != n {
			t.Fatalf("%d responses to a batch of %d", len(out), n)
		}
		for i, r := range out {
			got[rest[i].Index] = r
		}
		rest = rest[n:]
	}

	for _, l := range sent(logs) {
		w, g := want[l.Index], got[l.Index]
		if l.Type != raft.LogCommand {
			if w != nil || g != nil {
				t.Errorf("entry %d (%v): responses %v and %v, want nil", l.Index, l.Type, w, g)
			}
			continue
		}
		if !reflect.DeepEqual(w, g) {
			t.Errorf("entry %d: batched %+v, one by one %+v", l.Index, g, w)
		}
	}
	if r := got[uint64(len(logs)-applyHold+3)].(*Result); r.Err != ErrOutOfOrder {
		t.Errorf("the write out of its connection's order: %v", r.Err)
	}
	if a, b := digestOf(one), digestOf(batched); a != b || one.LastZxid() != batched.LastZxid() {
		t.Errorf("states differ: %x at %d one by one, %x at %d batched", a, one.LastZxid(), b, batched.LastZxid())
	}
	if !reflect.DeepEqual(oneSaw.got, batchedSaw.got) || len(oneSaw.got) < 2*applyHold {
		t.Errorf("watch events differ:\none by one %q\nbatched %q", oneSaw.got, batchedSaw.got)
	}
	if batched.EarlyApplied() == 0 || len(batched.early) != 0 || batched.appliedIndex.Load() != uint64(len(logs)) {
		t.Errorf("early %d, kept %d, applied index %d", batched.EarlyApplied(), len(batched.early), batched.appliedIndex.Load())
	}
}

// A batch of only entries that are no commands changes nothing and answers nil.
func TestApplyBatchOfConfigurations(t *testing.T) {
	f := NewFSM(datatree.Options{})
	out := f.ApplyBatch(sent(history()[:2]))
	if len(out) != 1 || out[0] != nil || f.LastZxid() != 0 || f.appliedIndex.Load() != 1 {
		t.Fatalf("responses %v, zxid %d, applied index %d", out, f.LastZxid(), f.appliedIndex.Load())
	}
}

// callerRecorder is a recorder with an identity, as the server's connections have.
type callerRecorder struct {
	recorder
	who datatree.Caller
}

func (c *callerRecorder) Caller() datatree.Caller { return c.who }

// A watch notification carries the zxid of the entry that fired it, every event of a
// multi the same (ZOOKEEPER-4655), and goes only to watchers that may read the node by
// the ACL it had at the change (ZOOKEEPER-4799).
func TestWatchEventsCarryTheirEntrysZxidAndACL(t *testing.T) {
	f := NewFSM(datatree.Options{ExtendedTypes: true})
	anon, plain := &callerRecorder{}, &recorder{}
	for _, w := range []watch.Watcher{anon, plain} {
		f.Watches.Add(w, "/", watch.PersistentRecursive)
		f.Watches.Add(w, "/a", watch.Child)
	}
	hidden := []jute.ACL{{Perms: jute.PermRead, Id: jute.Id{Scheme: "ip", Id: "10.0.0.1"}},
		{Perms: jute.PermAll &^ jute.PermRead, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	res := applyAll(t, f, []*Entry{
		{Session: 0x100, Op: jute.OpCreateSession, Time: 1, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}},
		{Session: 0x100, Op: jute.OpCreate, Time: 2, Req: &jute.CreateRequest{Path: "/a", Acl: open}},
		{Session: 0x100, Op: jute.OpMulti, Time: 3, Req: &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/a/x", Acl: open}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/a/y", Acl: hidden, Flags: jute.FlagEphemeral}}}}},
		{Session: 0x100, Op: jute.OpCloseSession, Time: 4},
	})
	a, m, c := res[1].Zxid, res[2].Zxid, res[3].Zxid
	if res[2].Err != jute.OK || res[3].Err != jute.OK || !(a < m && m < c) {
		t.Fatalf("results %+v %+v %+v", res[1], res[2], res[3])
	}
	ev := func(path string, typ int32, zxid int64) string { return fmt.Sprintf("%s %d %d", path, typ, zxid) }
	want := []string{
		ev("/a", jute.EventNodeCreated, a),
		ev("/a/x", jute.EventNodeCreated, m), ev("/a", jute.EventNodeChildrenChanged, m),
		ev("/a/y", jute.EventNodeCreated, m),
		ev("/a/y", jute.EventNodeDeleted, c),
	}
	if !reflect.DeepEqual(plain.got, want) {
		t.Errorf("watcher without identity:\n got %q\nwant %q", plain.got, want)
	}
	want = want[:3] // no READ on /a/y: neither its creation nor its deletion
	if !reflect.DeepEqual(anon.got, want) {
		t.Errorf("watcher without READ on /a/y:\n got %q\nwant %q", anon.got, want)
	}
}
