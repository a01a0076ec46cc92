package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
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
	for i := uint64(1); i <= 200; i += 4 {
		if err := w.StoreLogs(entries(i, i+3, 1)); err != nil {
			t.Fatal(err)
		}
	}
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
		for i := uint64(1); i <= 60; i += 10 {
			if err := w.StoreLogs(entries(i, i+9, 1)); err != nil {
				t.Fatal(err)
			}
		}
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

// Two suffix deletions, the second reaching below the first, whose truncation frame
// sits in a segment after the last live entry's: that segment must stay (replay needs its
// truncation to read the next segment's entries), and a reopen gives the log raft saw.
func TestWALTwoTruncationsAcrossSegments(t *testing.T) {
	dir := t.TempDir()
	const seg = 1024 // about 12 entries a segment
	w := mustOpenWAL(t, dir, seg)
	store := func(from, to, term uint64) {
		t.Helper()
		for i := from; i <= to; i += 2 {
			if err := w.StoreLogs(entries(i, min(i+1, to), term)); err != nil {
				t.Fatal(err)
			}
		}
	}
	store(1, 36, 1)
	if err := w.DeleteRange(20, 36); err != nil {
		t.Fatal(err)
	}
	store(20, 31, 2)
	if err := w.DeleteRange(15, 31); err != nil {
		t.Fatal(err)
	}
	store(15, 18, 3)
	term := func(i uint64) uint64 {
		if i >= 15 {
			return 3
		}
		return 1
	}
	expectLog(t, w, 1, 18, term)
	w.Close()
	w = mustOpenWAL(t, dir, seg)
	defer w.Close()
	expectLog(t, w, 1, 18, term)
}

// Removing segments after a reset, a crash part way leaves the newest of them (they go
// oldest first): the reset after them still empties the log at replay.
func TestWALCrashWhileRemovingSegments(t *testing.T) {
	dir := t.TempDir()
	const seg = 1024
	w := mustOpenWAL(t, dir, seg)
	for i := uint64(1); i <= 80; i += 2 {
		if err := w.StoreLogs(entries(i, i+1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	seqs, _ := segmentFiles(dir)
	if len(seqs) < 4 {
		t.Fatalf("%d segments", len(seqs))
	}
	saved := map[uint32][]byte{}
	for _, s := range seqs {
		saved[s], _ = os.ReadFile(filepath.Join(dir, segmentName(s)))
	}
	if err := w.DeleteRange(1, 80); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// The crash: the removal got through the oldest, not the one before the current.
	s := seqs[len(seqs)-2]
	if err := os.WriteFile(filepath.Join(dir, segmentName(s)), saved[s], 0o644); err != nil {
		t.Fatal(err)
	}
	w = mustOpenWAL(t, dir, seg)
	defer w.Close()
	expectLog(t, w, 0, 0, term1)
	if err := w.StoreLogs(entries(200, 201, 2)); err != nil {
		t.Fatal(err)
	}
}
