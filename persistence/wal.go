package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// DefaultSegmentSize is how much of the disk each transaction log segment takes, written
// with zeros before it is used: appending inside an allocated, zeroed file lets one
// fdatasync make a frame durable without a metadata update (ZooKeeper preallocates its
// log for the same reason, 64 MiB at a time).
const DefaultSegmentSize = 16 << 20

// WAL is zkraft's Raft log store: the transaction log in DATADIR/zkraft/log, segment
// files wal-<seq>.log of frames (wal_format.go). Every StoreLogs call is one frame, one
// write and one fdatasync, where bbolt spent two fsyncs per commit (its pages, then its
// meta page). Deleting a suffix or everything appends a truncate or reset frame, so
// nothing already written is ever overwritten; compaction only moves the first index
// and removes segments that hold nothing live, and after a restart the log may start
// earlier than it did (those entries are committed and applied; raft treats them as
// any entry below its snapshot).
//
// StoreLogsDeferred (wal_deferred.go) writes a frame the same way and returns before
// its fdatasync, which the WAL's syncer runs at once: a cluster's leader stores its own
// batches so, while it replicates them. Any write waits until the frame before it is
// durable, so at most the last frame is ever pending.
//
// It implements raft.MonotonicLogStore: entries are stored contiguously, and raft
// deletes the whole log after installing a snapshot instead of leaving a gap.
//
// A failed write or fdatasync leaves the file in a state nobody knows, so after one
// the WAL refuses every further write; the server must restart, which replays the log
// as it is on disk.
type WAL struct {
	dir      string
	segSize  int64
	readOnly bool

	wmu    sync.Mutex // the one writer: StoreLogs, DeleteRange, Close
	fb     frameBuilder
	failed error
	next   *preparer
	// emptyNext is, while no entry is live, the index replay expects next (a truncation
	// left nothing of the segments a compaction kept); 0: any. A StoreLogs at another
	// index writes a reset first.
	emptyNext uint64

	mu    sync.RWMutex // segs, first, live: written under wmu and mu, read under either
	segs  []*segment   // by seq; the last is the one written
	first uint64
	live  []entryRef // entries first, first+1, ...

	// dropped are segments taken out of segs, oldest first, still to be removed:
	// appended under wmu and mu, emptied under removeMu and mu (removeDropped).
	dropped  []*segment
	removeMu sync.Mutex

	syncer deferral  // the frame StoreLogsDeferred wrote, until it is durable (wal_deferred.go)
	slow   slowSyncs // who hears of a slow fdatasync (slow_sync.go)
	noSync bool      // forceSync=no: frames are never fdatasynced (force_sync.go)

	onFailed   atomic.Pointer[func(error)] // who hears that the log failed (OnFailed)
	failedOnce sync.Once
	onRoll     func(seq uint32) error // records each new segment (OnRoll); under wmu
}

type segment struct {
	seq  uint32
	path string
	f    *os.File
	tail int64 // where the next frame goes
	size int64 // how far the file is allocated
}

// entryRef says where an entry's record is. n == 0 only during replay, for a hole.
type entryRef struct{ seg, off, n uint32 }

var (
	errWALReadOnly = errors.New("persistence: the transaction log is open read-only")
	errWALClosed   = errors.New("persistence: the transaction log is closed")
)

// removeFile removes a segment; tests stop it part way, as a crash would.
var removeFile = os.Remove

func segmentName(seq uint32) string { return fmt.Sprintf("wal-%016x.log", seq) }

// OpenWAL opens (creating if needed) the transaction log in dir and replays it. A frame
// that a crash cut short at the end is removed (unless readOnly); any other damage is a
// *CorruptError.
func OpenWAL(dir string, segSize int64, readOnly bool) (*WAL, error) {
	if segSize <= 0 {
		segSize = DefaultSegmentSize
	}
	w := &WAL{dir: dir, segSize: segSize, readOnly: readOnly}
	if readOnly {
		w.failed = errWALReadOnly
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	} else if err := SyncDir(filepath.Dir(dir)); err != nil { // log/ itself must survive
		return nil, err
	}
	if err := w.replay(); err != nil {
		w.closeFiles()
		return nil, err
	}
	if !readOnly {
		// The segments' names are durable too: a run killed between a roll's rename and
		// its directory fsync left a segment this run trusts and writes to.
		if err := SyncDir(dir); err != nil {
			w.closeFiles()
			return nil, fmt.Errorf("persistence: fsync of %s: %w", dir, err)
		}
		w.next = newPreparer(filepath.Join(dir, "wal-next.tmp"), segSize)
		w.startSyncer()
	}
	return w, nil
}

// FirstIndex returns the first entry's index, 0 for an empty log.
func (w *WAL) FirstIndex() (uint64, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.live) == 0 {
		return 0, nil
	}
	return w.first, nil
}

// LastIndex returns the last entry's index, 0 for an empty log.
func (w *WAL) LastIndex() (uint64, error) {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.live) == 0 {
		return 0, nil
	}
	return w.first + uint64(len(w.live)) - 1, nil
}

// IsMonotonic tells raft that entries are stored without gaps (raft.MonotonicLogStore).
func (w *WAL) IsMonotonic() bool { return true }

// GetLog reads one entry and checks its record's checksum. Data and Extensions are
// fresh slices the caller may keep.
func (w *WAL) GetLog(index uint64, l *raft.Log) error {
	w.mu.RLock()
	if len(w.live) == 0 || index < w.first || index-w.first >= uint64(len(w.live)) {
		w.mu.RUnlock()
		return raft.ErrLogNotFound
	}
	ref := w.live[index-w.first]
	seg := w.segment(ref.seg)
	buf := make([]byte, ref.n)
	_, err := seg.f.ReadAt(buf, int64(ref.off))
	w.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("persistence: read entry %d from %s: %w", index, seg.path, err)
	}
	if err := decodeRecord(buf, l); err != nil {
		return &CorruptError{Path: seg.path, What: fmt.Sprintf("entry %d at offset %d: %v", index, ref.off, err)}
	}
	if l.Index != index {
		return &CorruptError{Path: seg.path, What: fmt.Sprintf("entry %d at offset %d is stored as entry %d", index, ref.off, l.Index)}
	}
	return nil
}

// segment finds a segment by seq; the caller holds mu or wmu.
func (w *WAL) segment(seq uint32) *segment {
	i := sort.Search(len(w.segs), func(i int) bool { return w.segs[i].seq >= seq })
	return w.segs[i]
}

// StoreLog stores one entry.
func (w *WAL) StoreLog(l *raft.Log) error { return w.StoreLogs([]*raft.Log{l}) }

// StoreLogs appends entries that continue the log (any index if it is empty) as one
// frame, durable when it returns.
func (w *WAL) StoreLogs(logs []*raft.Log) error { return w.storeLogs(logs, true) }

// storeLogs appends entries as one frame (or several, for a very large batch), durable
// when it returns if sync is set, else pending for the syncer (wal_deferred.go). A WAL
// that skips its syncs hands the syncer nothing: there is nothing to wait for.
func (w *WAL) storeLogs(logs []*raft.Log, sync bool) error {
	if len(logs) == 0 {
		return nil
	}
	sync = sync || w.noSync
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.failed != nil {
		return w.failed
	}
	idx := logs[0].Index
	w.mu.RLock()
	n, last := len(w.live), w.first+uint64(len(w.live))-1
	w.mu.RUnlock()
	if n > 0 && idx != last+1 {
		return fmt.Errorf("persistence: entry %d does not follow the last entry %d", idx, last)
	}
	if n == 0 && w.emptyNext != 0 && idx != w.emptyNext {
		if err := w.writeMarker(frameReset, 0); err != nil {
			return err
		}
	}
	for i, l := range logs {
		if l.Index != idx+uint64(i) {
			return fmt.Errorf("persistence: entry %d follows entry %d in one batch", l.Index, idx+uint64(i)-1)
		}
	}
	// One frame, or several for a batch too large for one (raft may keep a durable
	// prefix of a batch it was not told is stored).
	for len(logs) > 0 {
		w.fb.begin(frameEntries)
		n := 0
		for n < len(logs) && (n == 0 || len(w.fb.buf) < frameSplit) {
			w.fb.record(logs[n])
			n++
		}
		seg, off, err := w.write(w.fb.finish(), logs[0].Index, sync)
		if err != nil {
			return err
		}
		w.mu.Lock()
		if len(w.live) == 0 {
			w.first = logs[0].Index
		}
		for _, r := range w.fb.recs {
			w.live = append(w.live, entryRef{seg: seg.seq, off: uint32(off) + r.off, n: r.n})
		}
		w.mu.Unlock()
		w.emptyNext = 0
		logs = logs[n:]
	}
	return nil
}

// frameSplit is the size past which a batch goes on in a new frame, well below
// maxFrameLength.
const frameSplit = 64 << 20

// writeMarker appends a truncate or reset frame.
func (w *WAL) writeMarker(kind byte, t uint64) error {
	w.fb.begin(kind)
	if kind == frameTruncate {
		w.fb.truncate(t)
	}
	_, _, err := w.write(w.fb.finish(), 0, true)
	return err
}

// write appends one frame to the current segment, starting a new one when the frame
// does not fit, once the frame before it is durable. It makes the frame durable if
// sync is set, else leaves it to the syncer (first is its first entry's index).
func (w *WAL) write(frame []byte, first uint64, sync bool) (*segment, int64, error) {
	if err := w.awaitSynced(); err != nil {
		return nil, 0, w.fail(err)
	}
	var seg *segment
	if len(w.segs) > 0 {
		seg = w.segs[len(w.segs)-1]
	}
	if seg == nil || seg.tail > walHeaderSize && seg.tail+int64(len(frame)) > seg.size {
		var err error
		if seg, err = w.roll(); err != nil {
			return nil, 0, err
		}
	}
	off := seg.tail
	if off+int64(len(frame)) > 1<<32-1 {
		return nil, 0, fmt.Errorf("persistence: a frame of %d bytes does not fit a segment", len(frame))
	}
	if _, err := seg.f.WriteAt(frame, off); err != nil {
		return nil, 0, w.fail(fmt.Errorf("persistence: write to %s failed, the transaction log takes no more writes until a restart: %w", seg.path, err))
	}
	if sync {
		slow, err := w.timedSync(seg, syncFrame)
		w.reportSlow(slow)
		if err != nil {
			return nil, 0, w.fail(syncFailed(seg, err))
		}
	}
	seg.tail += int64(len(frame))
	seg.size = max(seg.size, seg.tail)
	if !sync {
		w.deferred(seg, first)
	}
	return seg, off, nil
}

// roll makes the prepared file the next segment.
func (w *WAL) roll() (*segment, error) {
	f, err := w.next.take()
	if err != nil {
		return nil, err
	}
	seq := uint32(1)
	if len(w.segs) > 0 {
		seq = w.segs[len(w.segs)-1].seq + 1
	}
	path := filepath.Join(w.dir, segmentName(seq))
	if err := os.Rename(w.next.path, path); err != nil {
		f.Close()
		w.next.start()
		return nil, err
	}
	if err := SyncDir(w.dir); err != nil {
		f.Close()
		w.next.start()
		return nil, w.fail(fmt.Errorf("persistence: fsync of %s failed, the transaction log takes no more writes until a restart: %w", w.dir, err))
	}
	w.next.start()
	if w.onRoll != nil {
		if err := w.onRoll(seq); err != nil {
			f.Close()
			return nil, w.fail(fmt.Errorf("persistence: recording %s failed, the transaction log takes no more writes until a restart: %w", path, err))
		}
	}
	seg := &segment{seq: seq, path: path, f: f, tail: walHeaderSize, size: w.segSize}
	w.mu.Lock()
	w.segs = append(w.segs, seg)
	w.mu.Unlock()
	return seg, nil
}

// OnRoll has fn called each time the log starts a new segment, once the segment's name
// is durable and before anything is written to it; an error from fn fails the log.
func (w *WAL) OnRoll(fn func(seq uint32) error) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.onRoll = fn
}

// LastSegment is the newest segment's seq, 0 for a log without one.
func (w *WAL) LastSegment() uint32 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if len(w.segs) == 0 {
		return 0
	}
	return w.segs[len(w.segs)-1].seq
}

// fail makes the log refuse every further write with err, after a write or fdatasync
// failed and left the files in a state nobody knows; under wmu.
func (w *WAL) fail(err error) error {
	w.failed = err
	w.reportFailed(err)
	return err
}

// reportFailed tells OnFailed's function of the log's first failure.
func (w *WAL) reportFailed(err error) {
	w.failedOnce.Do(func() {
		if fn := w.onFailed.Load(); fn != nil {
			(*fn)(err)
		}
	})
}

// OnFailed has fn called, once and at once, when a write or fdatasync of the log fails:
// from then on the log takes no more writes, and only a restart, which replays the log
// as it is on disk, brings it back. fn must not block.
func (w *WAL) OnFailed(fn func(error)) { w.onFailed.Store(&fn) }

// DeleteRange removes entries lo..hi: a prefix (compaction), a suffix (entries a new
// leader replaces) or everything (after a snapshot is installed). Raft asks for
// nothing else. The segments this leaves without a live entry are removed after the
// writer's lock is let go (see removeDropped).
func (w *WAL) DeleteRange(lo, hi uint64) error {
	if err := w.deleteRange(lo, hi); err != nil {
		return err
	}
	return w.removeDropped()
}

func (w *WAL) deleteRange(lo, hi uint64) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.failed != nil {
		return w.failed
	}
	w.mu.RLock()
	n, first := uint64(len(w.live)), w.first
	w.mu.RUnlock()
	last := first + n - 1
	if n == 0 || hi < first || lo > last {
		return nil
	}
	cur := w.segs[len(w.segs)-1]
	switch {
	case lo <= first && hi >= last:
		if err := w.writeMarker(frameReset, 0); err != nil {
			return err
		}
		cur = w.segs[len(w.segs)-1]
		w.mu.Lock()
		w.live, w.first = nil, 0
		w.mu.Unlock()
		w.dropSegments(func(s *segment) bool { return s != cur })
	case lo <= first:
		w.mu.Lock()
		w.live = w.live[hi+1-first:]
		w.first = hi + 1
		keep := w.live[0].seg
		w.mu.Unlock()
		w.dropSegments(func(s *segment) bool { return s.seq < keep && s != cur })
	case hi >= last:
		// The segments after the last live entry stay until compaction or a reset
		// removes them: one may hold an earlier truncation that replay needs.
		if err := w.writeMarker(frameTruncate, lo-1); err != nil {
			return err
		}
		w.mu.Lock()
		w.live = w.live[:lo-first]
		w.mu.Unlock()
	default:
		return fmt.Errorf("persistence: cannot delete entries %d..%d from the middle of the log %d..%d", lo, hi, first, last)
	}
	return nil
}

// dropSegments takes the segments that hold no live entry and that drop selects out of
// the log, onto the list removeDropped empties. The caller holds wmu, so the list is in
// the order of the segments.
func (w *WAL) dropSegments(drop func(*segment) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	kept := w.segs[:0]
	for _, s := range w.segs {
		if drop(s) {
			w.dropped = append(w.dropped, s)
		} else {
			kept = append(kept, s)
		}
	}
	for i := len(kept); i < len(w.segs); i++ {
		w.segs[i] = nil
	}
	w.segs = kept
}

// removeDropped closes and removes the dropped segments, oldest first, and makes their
// removal durable. It runs without wmu: unlinking a 16 MiB file and the directory's
// fsync wait for the file system's journal, and writes must not (a compaction that
// dropped ten segments held every write up 56 ms while it did this under the lock).
// Nothing reads a dropped segment, and a crash part way leaves the newest of them, which
// replay reads as it reads a compacted log. Callers drain the list one at a time, so
// the removals keep that order.
func (w *WAL) removeDropped() error {
	w.removeMu.Lock()
	defer w.removeMu.Unlock()
	w.mu.Lock()
	gone := w.dropped
	w.dropped = nil
	w.mu.Unlock()
	if len(gone) == 0 {
		return nil
	}
	for _, s := range gone {
		s.f.Close()
	}
	for i, s := range gone {
		if err := removeFile(s.path); err != nil && !os.IsNotExist(err) {
			// The rest are removed by the next call, still oldest first: a segment left
			// behind while newer ones go would stand before a gap at the next replay.
			w.mu.Lock()
			w.dropped = append(append([]*segment(nil), gone[i:]...), w.dropped...)
			w.mu.Unlock()
			return err
		}
	}
	return SyncDir(w.dir)
}

// Close waits for a segment being prepared and for a deferred frame's fdatasync, and
// closes the files.
func (w *WAL) Close() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.next != nil {
		w.next.stop()
		w.next = nil
	}
	w.failed = errWALClosed
	w.stopSyncer()
	return w.closeFiles()
}

func (w *WAL) closeFiles() error {
	var err error
	for _, s := range w.segs {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// SyncDir makes a directory's entries (a new, renamed or removed file) durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
