package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

func openStore(t *testing.T, dir string) (*Store, error) {
	t.Helper()
	return Open(dir, 2, hclog.NewNullLogger())
}

// fill stores entries 1..n with recognizable payloads.
func fill(t *testing.T, s *Store, from, to uint64) {
	t.Helper()
	var logs []*raft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte(fmt.Sprintf("payload-%06d", i))})
	}
	if err := s.Log.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
}

func expectCorrupt(t *testing.T, err error, file, what string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CorruptError naming %s, got %v", file, err)
	}
	if !strings.HasSuffix(ce.Path, file) || !strings.Contains(ce.What, what) {
		t.Fatalf("error %q: want file %s and %q", err, file, what)
	}
	if !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("error does not say what happens: %v", err)
	}
}

func TestStoreRoundTripAndReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 1, 50)
	var l raft.Log
	if err := s.Log.GetLog(7, &l); err != nil || string(l.Data) != "payload-000007" || l.Term != 1 {
		t.Fatalf("entry 7: %v %+v", err, l)
	}
	s.Close()
	s, err = openStore(t, dir)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	if err := s.Log.GetLog(50, &l); err != nil || string(l.Data) != "payload-000050" {
		t.Fatalf("entry 50 after reopen: %v %q", err, l.Data)
	}
}

// A flipped bit inside an entry's data is found at open, with the file named.
func TestFlippedBitInLogIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 1, 50)
	s.Close()
	path := filepath.Join(WALDir(dir), segmentName(1))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("payload-000023"))
	if i < 0 {
		t.Fatal("payload not found in the transaction log")
	}
	b[i+10] ^= 0x04
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = openStore(t, dir)
	expectCorrupt(t, err, segmentName(1), "does not match its checksum")
}

// A raft.db cut short (a torn write of the file's end, or a truncated copy) is refused.
func TestTruncatedStableStoreIsRefused(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		if err := s.Stable.Set([]byte(fmt.Sprintf("key-%d", i)), bytes.Repeat([]byte("v"), 500)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	fi, err := os.Stat(StablePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(StablePath(dir), fi.Size()/3); err != nil {
		t.Fatal(err)
	}
	_, err = openStore(t, dir)
	if err == nil {
		t.Fatal("a truncated raft.db was opened")
	}
	if !strings.Contains(err.Error(), "raft.db") {
		t.Fatalf("error does not name the file: %v", err)
	}
}

// snapshot writes a snapshot at index with the given state.
func snapshot(t *testing.T, s *Store, index uint64, state []byte) string {
	t.Helper()
	sink, err := s.Snapshots.Create(raft.SnapshotVersionMax, index, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sink.Write(state); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(SnapshotDir(s.Dir), sink.ID())
}

// openAndReadNewest opens the store and reads its newest snapshot as a start does.
func openAndReadNewest(t *testing.T, dir string) error {
	t.Helper()
	s, err := openStore(t, dir)
	if err != nil {
		return err
	}
	defer s.Close()
	snap, err := s.OpenNewestSnapshot()
	if err != nil {
		return err
	}
	if snap == nil {
		t.Fatal("no snapshot")
	}
	defer snap.Close()
	if _, err := io.Copy(io.Discard, snap); err != nil {
		return err
	}
	return snap.Verify()
}

func TestDamagedSnapshotIsRefused(t *testing.T) {
	cases := []struct {
		name, file, what string
		damage           func(t *testing.T, snapDir string)
	}{
		{"flipped bit", "state.bin", "CRC-64", func(t *testing.T, d string) {
			p := filepath.Join(d, "state.bin")
			b, _ := os.ReadFile(p)
			b[100] ^= 1
			os.WriteFile(p, b, 0o644)
		}},
		{"torn state", "state.bin", "torn write", func(t *testing.T, d string) {
			os.Truncate(filepath.Join(d, "state.bin"), 10)
		}},
		{"garbled meta", "meta.json", "not valid JSON", func(t *testing.T, d string) {
			os.WriteFile(filepath.Join(d, "meta.json"), []byte("{\"Index\": 12"), 0o644)
		}},
		{"missing state", "state.bin", "no such file", func(t *testing.T, d string) {
			os.Remove(filepath.Join(d, "state.bin"))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := openStore(t, dir)
			if err != nil {
				t.Fatal(err)
			}
			fill(t, s, 1, 40)
			d := snapshot(t, s, 30, bytes.Repeat([]byte("state"), 100))
			s.Close()
			if err := openAndReadNewest(t, dir); err != nil {
				t.Fatalf("intact store refused: %v", err)
			}
			c.damage(t, d)
			expectCorrupt(t, openAndReadNewest(t, dir), c.file, c.what)
		})
	}
}

// smallSegmentStore opens a store in a new dir with 1 KiB segments (about 16 entries
// each, for the rest of the test) holding entries 1..n, one frame each.
func smallSegmentStore(t *testing.T, n uint64) (string, *Store) {
	t.Helper()
	old := segmentSize
	segmentSize = 1024
	t.Cleanup(func() { segmentSize = old })
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= n; i++ {
		fill(t, s, i, i)
	}
	return dir, s
}

// The log must continue where the newest snapshot ends: a log compacted past a snapshot
// that is gone would start from partial state.
func TestGapBetweenSnapshotAndLogIsRefused(t *testing.T) {
	dir, s := smallSegmentStore(t, 100)
	d := snapshot(t, s, 40, []byte("state"))
	if err := s.Log.DeleteRange(1, 30); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatalf("a log compacted behind its snapshot was refused: %v", err)
	}
	s.Close()
	// Now drop the snapshot: entries 1..30 are nowhere.
	os.RemoveAll(d)
	_, err = openStore(t, dir)
	expectCorrupt(t, err, "log", "entries are missing")
}

// A snapshot a crash interrupted (its directory still named .tmp) is not a snapshot: the
// store opens from the newest finished one.
func TestInterruptedSnapshotIsIgnored(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 1, 40)
	snapshot(t, s, 30, []byte("finished state"))
	s.Close()
	tmp := filepath.Join(SnapshotDir(dir), "1-40-1795390000000.tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(tmp, "state.bin"), []byte("half writ"), 0o644)
	os.WriteFile(filepath.Join(tmp, "meta.json"), []byte("{\"Index\":"), 0o644)
	s, err = openStore(t, dir)
	if err != nil {
		t.Fatalf("an interrupted snapshot stopped the start: %v", err)
	}
	defer s.Close()
	snap, err := s.OpenNewestSnapshot()
	if err != nil || snap == nil || snap.Meta.Index != 30 {
		t.Fatalf("newest snapshot: %v %+v", err, snap)
	}
	defer snap.Close()
	b, _ := io.ReadAll(snap)
	if string(b) != "finished state" || snap.Verify() != nil {
		t.Fatalf("read %q", b)
	}
}

// A first start killed inside bbolt's open leaves an empty raft.db, which bbolt
// initializes; an empty raft.db beside a transaction log lost a term and a vote, and
// stops the start.
func TestEmptyRaftDBOnlyOnAFirstStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(StablePath(dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatalf("an empty raft.db of a first start: %v", err)
	}
	fill(t, s, 1, 5)
	s.Close()
	if err := os.WriteFile(StablePath(dir), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if s, err = openStore(t, dir); !errors.As(err, &ce) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("an empty raft.db beside a log: %v, want a CorruptError", err)
	}
}

// Raft removes an old snapshot file by file, meta.json first: a crash can leave a
// directory without it, which is skipped as raft skips it, if a whole snapshot is newer.
// The newest snapshot without its meta.json is damage, and stops the start.
func TestPartlyReapedSnapshotIsSkipped(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, s, 1, 40)
	old := snapshot(t, s, 20, []byte("older state"))
	newest := snapshot(t, s, 30, []byte("newer state"))
	s.Close()
	if err := os.Remove(filepath.Join(old, "meta.json")); err != nil {
		t.Fatal(err)
	}
	if err := openAndReadNewest(t, dir); err != nil {
		t.Fatalf("an old snapshot half removed stops the start: %v", err)
	}
	if err := os.Remove(filepath.Join(newest, "meta.json")); err != nil {
		t.Fatal(err)
	}
	var ce *CorruptError
	if err := openAndReadNewest(t, dir); !errors.As(err, &ce) {
		t.Fatalf("the newest snapshot without meta.json: %v, want a CorruptError", err)
	}
}

// The newest segment gone leaves a log that merely ends early, with no gap to see: the
// store is refused, naming the segment, by a start and by the offline tools, since
// raft.db records each segment the log rolls to. (Before, it opened, and the entries of
// that segment, acknowledged writes, were gone without a word.)
func TestMissingNewestSegmentIsRefused(t *testing.T) {
	dir, s := smallSegmentStore(t, 60)
	s.Close()
	seqs, _ := segmentFiles(WALDir(dir))
	if len(seqs) < 3 {
		t.Fatalf("%d segments", len(seqs))
	}
	newest := segmentName(seqs[len(seqs)-1])
	if err := os.Remove(filepath.Join(WALDir(dir), newest)); err != nil {
		t.Fatal(err)
	}
	_, err := openStore(t, dir)
	expectCorrupt(t, err, newest, "missing")
	_, err = OpenReadOnly(dir)
	expectCorrupt(t, err, newest, "missing")
}
