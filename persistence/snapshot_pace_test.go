package persistence

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/raft"
)

// A snapshot is written through the pacer (raft's file store still keeps state.bin
// where the pacer looks for it), its writeback requested chunk by chunk as it is
// written, and reads back byte for byte.
func TestSnapshotWritebackPaced(t *testing.T) {
	s, err := openStore(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sink, err := s.Snapshots.Create(raft.SnapshotVersionMax, 7, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	paced, ok := sink.(*pacedSink)
	if !ok {
		t.Fatalf("the sink is a %T: state.bin was not found where raft's file store writes it", sink)
	}
	state := make([]byte, 3*paceChunk+paceChunk/2)
	for i := range state {
		state[i] = byte(i * 7)
	}
	for b := state; len(b) > 0; {
		n := min(len(b), 64<<10)
		if _, err := sink.Write(b[:n]); err != nil {
			t.Fatal(err)
		}
		b = b[n:]
	}
	if paced.started != 3*paceChunk {
		t.Fatalf("writeback requested for %d bytes of %d, want the 3 whole chunks", paced.started, len(state))
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	_, rc, err := s.Snapshots.Open(sink.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, state) {
		t.Fatalf("read back %d bytes, not the %d written", len(got), len(state))
	}
}
