package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func entries(from, to, term uint64) []*raft.Log {
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: term, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("entry-%d-term-%d", i, term))})
	}
	return logs
}

func mustOpenWAL(t *testing.T, dir string, segSize int64) *WAL {
	t.Helper()
	w, err := OpenWAL(dir, segSize, false)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// expectLog checks that w holds exactly first..last, each of the term in terms (by index).
func expectLog(t *testing.T, w *WAL, first, last uint64, term func(uint64) uint64) {
	t.Helper()
	f, _ := w.FirstIndex()
	l, _ := w.LastIndex()
	if f != first || l != last {
		t.Fatalf("log holds %d..%d, want %d..%d", f, l, first, last)
	}
	for i := first; i <= last && last > 0; i++ {
		var e raft.Log
		if err := w.GetLog(i, &e); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if want := fmt.Sprintf("entry-%d-term-%d", i, term(i)); e.Index != i || e.Term != term(i) || string(e.Data) != want {
			t.Fatalf("entry %d: %+v, want %s", i, e, want)
		}
	}
	var e raft.Log
	if err := w.GetLog(last+1, &e); !errors.Is(err, raft.ErrLogNotFound) {
		t.Fatalf("entry after the last: %v", err)
	}
}

func term1(uint64) uint64 { return 1 }

func TestWALKeepsEveryFieldAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 0)
	at := time.Unix(1795390000, 123456789)
	in := []*raft.Log{
		{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: []byte("conf"), AppendedAt: at},
		{Index: 2, Term: 1, Type: raft.LogNoop},
		{Index: 3, Term: 2, Type: raft.LogCommand, Data: bytes.Repeat([]byte{0}, 5000), Extensions: []byte("ext")},
	}
	if err := w.StoreLogs(in); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = mustOpenWAL(t, dir, 0)
	defer w.Close()
	for _, want := range in {
		var got raft.Log
		if err := w.GetLog(want.Index, &got); err != nil {
			t.Fatal(err)
		}
		if got.Index != want.Index || got.Term != want.Term || got.Type != want.Type || !bytes.Equal(got.Data, want.Data) ||
			!bytes.Equal(got.Extensions, want.Extensions) || !got.AppendedAt.Equal(want.AppendedAt) {
			t.Fatalf("entry %d: got %+v, want %+v", want.Index, got, want)
		}
	}
	if err := w.StoreLogs(entries(5, 5, 2)); err == nil {
		t.Fatal("an entry after a gap was stored")
	}
}

// Many small segments: appends roll over, compaction drops whole segments only, a
// suffix deleted and written again with a new term stays replaced after a reopen, and
// deleting everything lets the log start again at any index.
func TestWALDeleteRangeSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	const seg = 1024
	w := mustOpenWAL(t, dir, seg)
	storeBatches(t, w, 1, 200, 4, 1)
	if n, _ := segmentFiles(dir); len(n) < 5 {
		t.Fatalf("%d segments, want many", len(n))
	}
	// A new leader replaces 150..200 with its own 150..160.
	if err := w.DeleteRange(150, 200); err != nil {
		t.Fatal(err)
	}
	if err := w.StoreLogs(entries(150, 160, 2)); err != nil {
		t.Fatal(err)
	}
	term := func(i uint64) uint64 {
		if i >= 150 {
			return 2
		}
		return 1
	}
	expectLog(t, w, 1, 160, term)
	// Compaction up to 100.
	before, _ := segmentFiles(dir)
	if err := w.DeleteRange(1, 100); err != nil {
		t.Fatal(err)
	}
	after, _ := segmentFiles(dir)
	if len(after) >= len(before) {
		t.Fatalf("compaction removed no segment: %d then %d", len(before), len(after))
	}
	expectLog(t, w, 101, 160, term)
	w.Close()

	w = mustOpenWAL(t, dir, seg)
	first, _ := w.FirstIndex()
	if first > 101 {
		t.Fatalf("after reopen the log starts at %d, after 101", first)
	}
	expectLog(t, w, first, 160, term)
	// Everything goes (a snapshot was installed), then the log starts again at 500.
	if err := w.DeleteRange(first, 160); err != nil {
		t.Fatal(err)
	}
	expectLog(t, w, 0, 0, term1)
	if err := w.StoreLogs(entries(500, 510, 3)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	w = mustOpenWAL(t, dir, seg)
	defer w.Close()
	expectLog(t, w, 500, 510, func(uint64) uint64 { return 3 })
}

// A batch of entries is one frame: after a crash at any point of its write it is there
// whole or not at all, and what was stored before it is all there. The crash is
// simulated on a copy of the segment: the frame's bytes up to a cut, or a random subset
// of its 512-byte sectors (a disk may write them in any order), over the zeros that were
// there.
func TestWALBatchIsAllOrNothingAfterACrash(t *testing.T) {
	src := t.TempDir()
	const segSize = 64 << 10
	w := mustOpenWAL(t, src, segSize)
	if err := w.StoreLogs(entries(1, 40, 1)); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(src, segmentName(1))
	before, _ := os.ReadFile(seg)
	big := entries(41, 60, 1)
	for _, l := range big {
		l.Data = append(l.Data, bytes.Repeat([]byte{'x'}, 300)...) // a frame of many sectors
	}
	if err := w.StoreLogs(big); err != nil {
		t.Fatal(err)
	}
	w.Close()
	after, _ := os.ReadFile(seg)
	from, to := -1, -1 // the bytes the second batch wrote
	for i := range after {
		if after[i] != before[i] {
			if from < 0 {
				from = i
			}
			to = i + 1
		}
	}
	if from < 0 {
		t.Fatal("the second batch changed nothing")
	}
	check := func(t *testing.T, name string, img []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, segmentName(1)), img, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := OpenWAL(dir, segSize, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		last, _ := w.LastIndex()
		if last != 40 && last != 60 {
			t.Fatalf("%s: the log ends at %d: part of a batch survived", name, last)
		}
		expectLog(t, w, 1, last, term1)
		// The log goes on from there, and reopens the same.
		if err := w.StoreLogs(entries(last+1, last+5, 1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w.Close()
		w = mustOpenWAL(t, dir, segSize)
		expectLog(t, w, 1, last+5, term1)
		w.Close()
	}
	for cut := from; cut <= to; cut += 97 {
		img := append([]byte(nil), before...)
		copy(img[from:cut], after[from:cut])
		check(t, fmt.Sprintf("cut at %d", cut), img)
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		img := append([]byte(nil), before...)
		for s := from / sectorSize * sectorSize; s < to; s += sectorSize {
			if rng.Intn(2) == 0 {
				copy(img[s:min(s+sectorSize, len(img))], after[s:min(s+sectorSize, len(after))])
			}
		}
		check(t, fmt.Sprintf("sectors round %d", round), img)
	}
}

// Damage that no crash makes is refused, naming the file: a flipped bit in a frame that
// others follow or in a whole last frame, and a segment file that is gone.
func TestWALDamageIsRefused(t *testing.T) {
	build := func(t *testing.T, segSize int64) string {
		dir := t.TempDir()
		w := mustOpenWAL(t, dir, segSize)
		storeBatches(t, w, 1, 60, 10, 1)
		w.Close()
		return dir
	}
	flip := func(t *testing.T, dir, payload string) {
		p := filepath.Join(dir, segmentName(1))
		b, _ := os.ReadFile(p)
		i := bytes.Index(b, []byte(payload))
		if i < 0 {
			t.Fatalf("%s not found", payload)
		}
		b[i+3] ^= 0x10
		os.WriteFile(p, b, 0o644)
	}
	t.Run("middle frame", func(t *testing.T) {
		dir := build(t, 0)
		flip(t, dir, "entry-25-")
		_, err := OpenWAL(dir, 0, false)
		expectCorrupt(t, err, segmentName(1), "does not match its checksum")
	})
	t.Run("last frame", func(t *testing.T) {
		dir := build(t, 0)
		flip(t, dir, "entry-58-")
		_, err := OpenWAL(dir, 0, false)
		expectCorrupt(t, err, segmentName(1), "does not match its checksum")
	})
	t.Run("last frame holding zeros", func(t *testing.T) {
		// Aligned sectors of zeros in a frame are also what a crash that lost them
		// leaves; a flipped bit in a record outside them is damage all the same (it was
		// taken for a torn frame, and the acknowledged batch was dropped without a word).
		dir := t.TempDir()
		w := mustOpenWAL(t, dir, 0)
		storeBatches(t, w, 1, 10, 10, 1)
		last := entries(11, 13, 1)
		last[1].Data = make([]byte, 4*sectorSize)
		if err := w.StoreLogs(last); err != nil {
			t.Fatal(err)
		}
		w.Close()
		flip(t, dir, "entry-13-")
		_, err := OpenWAL(dir, 0, false)
		expectCorrupt(t, err, segmentName(1), "does not match its checksum")
	})
	t.Run("missing segment", func(t *testing.T) {
		dir := build(t, 600)
		seqs, _ := segmentFiles(dir)
		if len(seqs) < 3 {
			t.Fatalf("%d segments", len(seqs))
		}
		os.Remove(filepath.Join(dir, segmentName(seqs[1])))
		_, err := OpenWAL(dir, 600, false)
		expectCorrupt(t, err, "", "is missing")
	})
	t.Run("bad header", func(t *testing.T) {
		dir := build(t, 0)
		p := filepath.Join(dir, segmentName(1))
		b, _ := os.ReadFile(p)
		b[2] = 'X'
		os.WriteFile(p, b, 0o644)
		_, err := OpenWAL(dir, 0, false)
		expectCorrupt(t, err, segmentName(1), "bad magic")
	})
}

// A read-only open (tools) reads a log with a torn tail without repairing it.
func TestWALReadOnlyLeavesTheFileAlone(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 0)
	w.StoreLogs(entries(1, 10, 1))
	big := entries(11, 20, 1)
	for _, l := range big {
		l.Data = append(l.Data, bytes.Repeat([]byte{'x'}, 300)...)
	}
	w.StoreLogs(big)
	w.Close()
	p := filepath.Join(dir, segmentName(1))
	b, _ := os.ReadFile(p)
	// The second frame torn: its first sector written, the next ones not.
	sector := int64(bytes.Index(b, []byte("entry-11-"))) / sectorSize * sectorSize
	clear(b[sector+sectorSize : sector+4*sectorSize])
	os.WriteFile(p, b, 0o644)
	ro, err := OpenWAL(dir, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	expectLog(t, ro, 1, 10, term1)
	if err := ro.StoreLogs(entries(11, 11, 1)); err == nil {
		t.Fatal("a read-only log took a write")
	}
	ro.Close()
	if after, _ := os.ReadFile(p); !bytes.Equal(after, b) {
		t.Fatal("a read-only open changed the file")
	}
	// A writer repairs it and goes on.
	w = mustOpenWAL(t, dir, 0)
	defer w.Close()
	expectLog(t, w, 1, 10, term1)
	if err := w.StoreLogs(entries(11, 12, 1)); err != nil {
		t.Fatal(err)
	}
}

// A store from before the transaction log keeps its log in raft.db: Open moves it into
// log/ and removes it from raft.db; a crash in the middle (log.new left behind) redoes it.
func TestLogInRaftDBIsMoved(t *testing.T) {
	dir := t.TempDir()
	bolt, err := openBolt(StablePath(dir), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := bolt.Set(checksumKey, []byte(checksumCRC32C)); err != nil {
		t.Fatal(err)
	}
	legacy := &checksumLog{inner: bolt, path: StablePath(dir)}
	if err := legacy.StoreLogs(entries(1, 3000, 1)); err != nil {
		t.Fatal(err)
	}
	if err := bolt.SetUint64([]byte("CurrentTerm"), 7); err != nil {
		t.Fatal(err)
	}
	bolt.Close()
	if err := os.MkdirAll(WALDir(dir)+".new", 0o755); err != nil { // a crash mid-copy
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(WALDir(dir)+".new", segmentName(1)), []byte("half"), 0o644)

	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	expectLog(t, s.wal, 1, 3000, term1)
	if n, _ := s.bolt.LastIndex(); n != 0 {
		t.Fatalf("raft.db still holds entries up to %d", n)
	}
	if v, err := s.Stable.GetUint64([]byte("CurrentTerm")); err != nil || v != 7 {
		t.Fatalf("stable store: %d %v", v, err)
	}
	s.Close()
	if _, err := os.Stat(WALDir(dir) + ".new"); !os.IsNotExist(err) {
		t.Fatalf("log.new is still there: %v", err)
	}
	s, err = openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	expectLog(t, s.wal, 1, 3000, term1)
}

// storeBatches stores from..to in batches of size entries, a frame each.
func storeBatches(t *testing.T, w *WAL, from, to, size, term uint64) {
	t.Helper()
	for i := from; i <= to; i += size {
		if err := w.StoreLogs(entries(i, min(i+size-1, to), term)); err != nil {
			t.Fatal(err)
		}
	}
}

// twoTruncations builds, with 1 KiB segments and two entries a frame (16 a segment): segment 1 holding 1..16, segment 2
// holding 17..32 and a truncation after 9, segment 3 holding 10..13 (term 2), a
// truncation after 4 and 5..6 (term 3). Replay reads segment 3's entry 10 after
// segment 1's 16 only through segment 2's truncation.
func twoTruncations(t *testing.T, dir string) *WAL {
	w := mustOpenWAL(t, dir, 1024)
	storeBatches(t, w, 1, 32, 2, 1)
	if err := w.DeleteRange(10, 32); err != nil {
		t.Fatal(err)
	}
	storeBatches(t, w, 10, 13, 2, 2)
	if err := w.DeleteRange(5, 13); err != nil {
		t.Fatal(err)
	}
	storeBatches(t, w, 5, 6, 2, 3)
	return w
}

func twoTruncationsTerm(i uint64) uint64 {
	if i >= 5 {
		return 3
	}
	return 1
}

// A suffix deletion keeps the segments after the last live entry: segment 2 holds
// nothing live after the second truncation, but replay needs its truncation.
func TestWALTwoTruncationsAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	w := twoTruncations(t, dir)
	expectLog(t, w, 1, 6, twoTruncationsTerm)
	w.Close()
	w = mustOpenWAL(t, dir, 1024)
	defer w.Close()
	expectLog(t, w, 1, 6, twoTruncationsTerm)
}

// A segment whose rename a power cut took back (a run killed between a roll's rename and
// its directory fsync, the next run writing frames into it) is wal-next.tmp again, full
// of frames. The preparer does not reuse such a file as it is: were its frames left
// behind the new segment's first ones, replay would read the older term's entries after
// the newer one. (Reopening the log now also fsyncs its directory, which closes the
// window that leads here.)
func TestWALPreparedFileWithFramesIsWrittenAnew(t *testing.T) {
	dir := t.TempDir()
	const segSize = 4096
	w := mustOpenWAL(t, dir, segSize)
	var i uint64
	for i = 1; ; i++ { // one entry per frame until three frames are in segment 2
		if err := w.StoreLogs(entries(i, i, 1)); err != nil {
			t.Fatal(err)
		}
		if len(w.segs) == 2 && w.segs[1].tail > walHeaderSize+3*40 {
			break
		}
	}
	last := i
	var inSeg1 uint64
	for j := uint64(1); j <= last; j++ {
		if w.live[j-w.first].seg == 1 {
			inSeg1 = j
		}
	}
	w.Close()

	// The power cut takes back the rename of wal-next.tmp to segment 2 (and the creation
	// of the next wal-next.tmp): the inode with its fdatasynced frames is wal-next.tmp.
	if err := os.Rename(filepath.Join(dir, segmentName(2)), filepath.Join(dir, "wal-next.tmp")); err != nil {
		t.Fatal(err)
	}
	w = mustOpenWAL(t, dir, segSize)
	if l, _ := w.LastIndex(); l != inSeg1 {
		t.Fatalf("after the lost rename the log ends at %d, want %d", l, inSeg1)
	}
	// A new term's leader writes entry inSeg1+1 again; it does not fit segment 1, so the
	// WAL rolls onto the reused wal-next.tmp.
	if err := w.StoreLogs(entries(inSeg1+1, inSeg1+1, 2)); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w, err := OpenWAL(dir, segSize, false)
	if err != nil {
		t.Fatalf("reopen refused: %v", err)
	}
	defer w.Close()
	expectLog(t, w, 1, inSeg1+1, func(i uint64) uint64 {
		if i > inSeg1 {
			return 2
		}
		return 1
	})
}

// A segment whose removal failed is removed by the next compaction, still before the
// newer ones: left behind while they go, it would stand before a gap at the next replay.
func TestWALRetriesAFailedSegmentRemoval(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 1024)
	t.Cleanup(func() { w.Close() }) // the one open last: its preparer writes into dir
	for i := uint64(1); i <= 60; i++ {
		if err := w.StoreLogs(entries(i, i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := segmentFiles(dir)
	failed := ""
	removeFile = func(p string) error {
		if failed == "" {
			failed = p
			return errors.New("EIO")
		}
		return os.Remove(p)
	}
	defer func() { removeFile = os.Remove }()
	if err := w.DeleteRange(1, 30); err == nil {
		t.Fatal("the failed removal was not reported")
	}
	if _, err := os.Stat(failed); err != nil {
		t.Fatalf("the segment whose removal failed is gone: %v", err)
	}
	if err := w.DeleteRange(31, 50); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(failed); !os.IsNotExist(err) {
		t.Fatalf("%s is still there after the next compaction (%v)", failed, err)
	}
	after, _ := segmentFiles(dir)
	if len(after) >= len(before) || after[0] <= before[0] {
		t.Fatalf("segments %v before, %v after", before, after)
	}
	w.Close()
	w = mustOpenWAL(t, dir, 1024) // no gap: the older segment did not outlive the newer ones
	// (a reopened log may start before the compacted point: its first kept segment is read whole)
	if f, _ := w.FirstIndex(); f > 51 || f <= 30 {
		t.Fatalf("reopened log starts at %d, want 31..51", f)
	}
	expectLogTail(t, w, 51, 60)
}

// expectLogTail checks that w holds from..to of term 1 and nothing after.
func expectLogTail(t *testing.T, w *WAL, from, to uint64) {
	t.Helper()
	if l, _ := w.LastIndex(); l != to {
		t.Fatalf("log ends at %d, want %d", l, to)
	}
	for i := from; i <= to; i++ {
		var e raft.Log
		if err := w.GetLog(i, &e); err != nil || e.Index != i || string(e.Data) != fmt.Sprintf("entry-%d-term-1", i) {
			t.Fatalf("entry %d: %+v, %v", i, e, err)
		}
	}
}

// A run killed in the middle of an fdatasync can leave a whole frame that is only in the
// page cache, and replay lists it with the rest; reopening the log for writing makes
// every segment durable before the log answers for them (a read-only open touches
// nothing).
func TestWALReopenMakesReplayedSegmentsDurable(t *testing.T) {
	dir := t.TempDir()
	w := twoTruncations(t, dir)
	w.Close()
	seqs, err := segmentFiles(dir)
	if err != nil || len(seqs) < 2 {
		t.Fatalf("segments %v, %v: want several", seqs, err)
	}
	synced := map[string]bool{}
	syncReplayed = func(f *os.File) error {
		synced[filepath.Base(f.Name())] = true
		return fdatasync(f)
	}
	defer func() { syncReplayed = fdatasync }()
	ro, err := OpenWAL(dir, 1024, true)
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	if len(synced) != 0 {
		t.Fatalf("a read-only open synced %v", synced)
	}
	w = mustOpenWAL(t, dir, 1024)
	for _, seq := range seqs {
		if !synced[segmentName(seq)] {
			t.Errorf("%s was not made durable on reopen (synced: %v)", segmentName(seq), synced)
		}
	}
	syncReplayed = func(*os.File) error { return errors.New("disk gone") }
	w.Close()
	if _, err := OpenWAL(dir, 1024, false); err == nil {
		t.Fatal("a reopen whose fdatasync failed was accepted")
	}
}

// Deleting everything removes the other segments oldest first: a crash after any
// number of removals leaves the newest ones, which replay reads (the reset in the
// current segment empties the log), never a gap before a segment that needs what was
// removed.
func TestWALCrashWhileRemovingSegments(t *testing.T) {
	for crashAfter := 0; crashAfter <= 2; crashAfter++ {
		t.Run(fmt.Sprintf("after %d removals", crashAfter), func(t *testing.T) {
			dir := t.TempDir()
			w := twoTruncations(t, dir)
			removed := 0
			removeFile = func(p string) error {
				if removed == crashAfter {
					return errors.New("crash")
				}
				removed++
				return os.Remove(p)
			}
			defer func() { removeFile = os.Remove }()
			err := w.DeleteRange(1, 6)
			if (err != nil) != (crashAfter < 2) {
				t.Fatalf("DeleteRange: %v", err)
			}
			w.Close()
			w = mustOpenWAL(t, dir, 1024)
			defer w.Close()
			expectLog(t, w, 0, 0, term1)
			if err := w.StoreLogs(entries(200, 201, 4)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A compaction's segment removals happen after the writer's lock is let go: a write
// that comes while a removal waits for the file system returns without waiting for it,
// and the removed segments are gone once DeleteRange returns.
func TestWALWritesDoNotWaitForSegmentRemoval(t *testing.T) {
	dir := t.TempDir()
	w := mustOpenWAL(t, dir, 1024)
	defer w.Close()
	storeBatches(t, w, 1, 60, 4, 1)
	if len(w.segs) < 3 {
		t.Fatalf("want several segments to compact, have %d", len(w.segs))
	}
	inRemove, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	removeFile = func(p string) error {
		once.Do(func() { close(inRemove) })
		<-release
		return os.Remove(p)
	}
	defer func() { removeFile = os.Remove }()
	deleted := make(chan error, 1)
	go func() { deleted <- w.DeleteRange(1, 50) }()
	<-inRemove
	stored := make(chan error, 1)
	go func() { stored <- w.StoreLogs(entries(61, 64, 1)) }()
	select {
	case err := <-stored:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("a write waited for a compaction's segment removal")
	}
	close(release)
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	files, err := segmentFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(w.segs) {
		t.Fatalf("%d segment files on disk after DeleteRange returned, the log holds %d", len(files), len(w.segs))
	}
	expectLog(t, w, 51, 64, term1)
	w.Close()
	w = mustOpenWAL(t, dir, 1024)
	defer w.Close()
	f, _ := w.FirstIndex()
	if l, _ := w.LastIndex(); l != 64 || f > 51 {
		t.Fatalf("after reopening the log holds %d..%d, want up to 64 from 51 or before", f, l)
	}
}
