package quorum

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// slowSink lets the test apply entries between the chunks Persist writes.
type slowSink struct {
	sink
	wrote chan struct{}
	goOn  chan struct{}
}

func (s *slowSink) Write(b []byte) (int, error) {
	s.wrote <- struct{}{}
	<-s.goOn
	return s.sink.Write(b)
}

// Entries go on being applied while a snapshot is persisted; the snapshot holds the state
// at the moment it was taken, and the FSM holds everything.
func TestSnapshotDoesNotStopApplies(t *testing.T) {
	mk := func(i int) *Entry {
		return &Entry{Session: 0x100, Op: jute.OpCreate, Time: int64(1000 + i), Req: &jute.CreateRequest{Path: fmt.Sprintf("/n%05d", i), Data: []byte("x"), Acl: open}}
	}
	live, atSnapshot := NewFSM(datatree.Options{}), NewFSM(datatree.Options{})
	index := uint64(0)
	apply := func(fs []*FSM, e *Entry) {
		index++
		for _, f := range fs {
			f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: e.Marshal()})
		}
	}
	apply([]*FSM{live, atSnapshot}, &Entry{Session: 0x100, Op: jute.OpCreateSession, Time: 999, Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}})
	for i := 0; i < 3000; i++ {
		apply([]*FSM{live, atSnapshot}, mk(i))
	}
	snap, err := live.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s := &slowSink{wrote: make(chan struct{}), goOn: make(chan struct{})}
	var perr error
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		perr = snap.Persist(s)
	}()
	// Between every chunk the snapshot writes, more creates and deletes are applied, with
	// no lock held by the snapshot: they would deadlock here otherwise.
	n := 3000
	for chunks := 0; ; chunks++ {
		done := false
		select {
		case <-s.wrote:
		case <-finished:
			done = true
		}
		if done {
			if chunks < 3 {
				t.Fatalf("the snapshot was written in %d chunks", chunks)
			}
			break
		}
		for k := 0; k < 20; k++ {
			apply([]*FSM{live}, mk(n))
			apply([]*FSM{live}, &Entry{Session: 0x100, Op: jute.OpDelete, Time: 5, Req: &jute.DeleteRequest{Path: fmt.Sprintf("/n%05d", n-3000), Version: -1}})
			n++
		}
		s.goOn <- struct{}{}
	}
	if perr != nil {
		t.Fatal(perr)
	}
	snap.Release()
	restored := NewFSM(datatree.Options{})
	if err := restored.Restore(io.NopCloser(bytes.NewReader(s.Bytes()))); err != nil {
		t.Fatal(err)
	}
	da, _ := digest(atSnapshot)
	dr, _ := digest(restored)
	if da != dr || restored.LastZxid() != atSnapshot.LastZxid() {
		t.Fatal("the snapshot is not the state at the moment it was taken")
	}
	if _, err := live.Snapshot(); err != nil { // the tree was thawed
		t.Fatalf("a second snapshot: %v", err)
	}
	live.Read(func(tr *datatree.Tree, _ *session.Table) {
		if kids, _, _ := tr.Children("/"); len(kids) != 3001 || n == 3000 {
			t.Fatalf("live tree has %d children after %d creates", len(kids), n)
		}
	})
}
