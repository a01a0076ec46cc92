package persistence

import (
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// pacedSnapshots is raft's file snapshot store with the writing of state.bin paced: as
// each paceChunk of it is written, the kernel is told to start writing that part out
// and Persist waits for the part before it. Without this, state.bin (tens of MiB at a
// few 100k znodes) sits dirty in the page cache until the sink's closing fsync sends it
// to the disk at once, and the transaction log's fdatasyncs queue behind it: every write
// acknowledged in that window waited for the whole snapshot (60-90 ms on the benchmark
// machine for 18 MiB). Paced, a log sync waits behind at most two chunks.
type pacedSnapshots struct {
	*raft.FileSnapshotStore
	dir string // the store's snapshots/ directory
}

// paceChunk is how much of a snapshot is written between two writeback requests.
const paceChunk = 1 << 20

func (p *pacedSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := p.FileSnapshotStore.Create(version, index, term, configuration, configurationIndex, trans)
	if err != nil {
		return nil, err
	}
	// raft's file store writes state.bin in "<id>.tmp/" until the sink closes. A layout
	// it may change some day only leaves the snapshot unpaced.
	f, err := os.Open(filepath.Join(p.dir, sink.ID()+".tmp", "state.bin"))
	if err != nil {
		return sink, nil
	}
	return &pacedSink{SnapshotSink: sink, f: f}, nil
}

// pacedSink passes writes to raft's sink and paces their writeback through f, a second
// descriptor of the same file.
type pacedSink struct {
	raft.SnapshotSink
	f       *os.File
	written int64 // bytes passed to the sink
	started int64 // bytes whose writeback was requested
}

func (s *pacedSink) Write(b []byte) (int, error) {
	n, err := s.SnapshotSink.Write(b)
	s.written += int64(n)
	if err == nil && s.written-s.started >= paceChunk {
		// raft's sink buffers a few KiB; what it has not written yet is taken with
		// the next chunk.
		writeback(s.f, s.started, s.written-s.started)
		s.started = s.written
	}
	return n, err
}

func (s *pacedSink) Close() error {
	s.f.Close()
	return s.SnapshotSink.Close()
}

func (s *pacedSink) Cancel() error {
	s.f.Close()
	return s.SnapshotSink.Cancel()
}
