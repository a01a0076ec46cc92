package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"
)

// Store is one server's durable state in its store directory (DATADIR/zkraft):
//
//	log/        the Raft log: zkraft's transaction log (see WAL), one fdatasync per
//	            batch raft stores, a CRC-32C on every frame and every entry
//	raft.db     the stable store (term, vote): raft-boltdb on bbolt; also the number
//	            of the newest segment the log rolled to, so that Open finds that
//	            segment gone. A store written before the transaction log existed
//	            keeps its log here too; Open moves it into log/ once.
//	snapshots/  hashicorp/raft's file snapshot store: one directory per snapshot with
//	            meta.json (index, term, membership, size, CRC-64 of state.bin) and
//	            state.bin (quorum's state machine snapshot, see quorum/snapshot.go),
//	            sent to the disk a MiB at a time as it is written (pacedSnapshots)
//
// Open refuses a store that is damaged or has a gap between its newest snapshot and
// its log, with a *CorruptError naming the file: zkraft never starts from partial data.
type Store struct {
	Dir       string
	Log       raft.LogStore // quorum keeps its newest entries in memory in front of it
	Stable    raft.StableStore
	Snapshots raft.SnapshotStore // raft's file snapshot store, its writing paced (pacedSnapshots)
	bolt      *raftboltdb.BoltStore
	wal       *WAL
}

// CorruptError says which file of a store is damaged and how.
type CorruptError struct {
	Path string
	What string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("persistence: %s is damaged: %s (refusing to start from it; a cluster member can be wiped with `zkraft wipe` and rebuilt from the leader, see docs/operations.md)", e.Path, e.What)
}

// segmentSize is the store's segment size; tests make it small.
var segmentSize int64 = DefaultSegmentSize

// StablePath, WALDir and SnapshotDir name the store's files under dir.
func StablePath(dir string) string  { return filepath.Join(dir, "raft.db") }
func WALDir(dir string) string      { return filepath.Join(dir, "log") }
func SnapshotDir(dir string) string { return filepath.Join(dir, "snapshots") }

// Open opens (creating if needed) the store in dir, keeping retain snapshots, and
// verifies it (see Verify).
func Open(dir string, retain int, logger hclog.Logger) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bolt, err := openBolt(StablePath(dir), false)
	if err != nil {
		return nil, err
	}
	s := &Store{Dir: dir, Stable: bolt, bolt: bolt}
	if s.wal, err = openWAL(dir, bolt); err != nil {
		bolt.Close()
		return nil, err
	}
	s.Log = s.wal
	files, err := raft.NewFileSnapshotStoreWithLogger(dir, retain, logger)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Snapshots = &pacedSnapshots{FileSnapshotStore: files, dir: SnapshotDir(dir)}
	if err := s.verify(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewestSnapshot is the newest snapshot in the store: its index and when its state file
// was written (ZooKeeper's AdminServer shows its last snapshot file's modification
// time); ok is false while there is none.
func (s *Store) NewestSnapshot() (index uint64, written time.Time, ok bool) {
	metas, err := s.Snapshots.List()
	if err != nil || len(metas) == 0 {
		return 0, time.Time{}, false
	}
	fi, err := os.Stat(filepath.Join(SnapshotDir(s.Dir), metas[0].ID, "state.bin"))
	if err != nil {
		return 0, time.Time{}, false
	}
	return metas[0].Index, fi.ModTime(), true
}

// openWAL opens the transaction log, first moving a log that raft.db still holds (a
// store written by an earlier zkraft) into it: copied into log.new, made durable,
// renamed to log/, and only then deleted from raft.db, so a crash at any point leaves
// one complete copy that the next Open uses.
func openWAL(dir string, bolt *raftboltdb.BoltStore) (*WAL, error) {
	walDir := WALDir(dir)
	if _, err := os.Stat(walDir); os.IsNotExist(err) {
		if err := migrateLog(dir, bolt); err != nil {
			return nil, err
		}
	}
	w, err := OpenWAL(walDir, segmentSize, false)
	if err != nil {
		return nil, err
	}
	// What raft.db still holds is a moved log whose removal a crash interrupted: it
	// ends where the transaction log ends. Anything else (an older zkraft ran on this
	// store after this one) is not thrown away.
	first, err := bolt.FirstIndex()
	if err == nil && first > 0 {
		var last, walLast uint64
		walLast, _ = w.LastIndex()
		if last, err = bolt.LastIndex(); err == nil && last > walLast {
			w.Close()
			return nil, &CorruptError{Path: StablePath(dir), What: fmt.Sprintf("it holds log entries up to %d, past the transaction log's last entry %d: an older zkraft wrote them after this one moved the log (no way back to the older layout, see docs/operations.md)", last, walLast)}
		}
		if err == nil {
			err = (&checksumLog{inner: bolt}).DeleteRange(first, last)
		}
	}
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("persistence: removing the moved log from %s: %w", StablePath(dir), err)
	}
	if err := checkLastSegment(dir, w, bolt); err != nil {
		w.Close()
		return nil, err
	}
	w.OnRoll(func(seq uint32) error { return bolt.SetUint64(lastSegmentKey, uint64(seq)) })
	return w, nil
}

// lastSegmentKey is raft.db's record of the newest segment the transaction log rolled
// to. A newest segment that is gone (deleted by hand, lost with the file system) leaves
// no gap in the log to see, only a log that ends early; the record shows it.
var lastSegmentKey = []byte("zkraftLastSegment")

// checkLastSegment refuses a log whose newest segment is older than the one raft.db
// records. A store written before the record has none, and is not checked.
func checkLastSegment(dir string, w *WAL, stable raft.StableStore) error {
	want, err := stable.GetUint64(lastSegmentKey)
	if errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("persistence: %s: %w", StablePath(dir), err)
	}
	if have := w.LastSegment(); uint64(have) < want {
		return &CorruptError{Path: filepath.Join(WALDir(dir), segmentName(uint32(want))),
			What: fmt.Sprintf("missing: the log reached this segment (raft.db records it) and now ends in segment %d, so the entries written after are gone", have)}
	}
	return nil
}

// migrateLog copies raft.db's log, if it has one, into a new transaction log.
func migrateLog(dir string, bolt *raftboltdb.BoltStore) error {
	last, err := bolt.LastIndex()
	if err != nil || last == 0 {
		return err
	}
	legacy, err := legacyLog(bolt, StablePath(dir))
	if err != nil {
		return err
	}
	first, err := bolt.FirstIndex()
	if err != nil {
		return err
	}
	tmp := WALDir(dir) + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	w, err := OpenWAL(tmp, segmentSize, false)
	if err != nil {
		return err
	}
	const batch = 1024
	for i := first; i <= last; i += batch {
		logs := make([]*raft.Log, 0, batch)
		for j := i; j <= last && j < i+batch; j++ {
			l := new(raft.Log)
			if err := legacy.GetLog(j, l); err != nil {
				w.Close()
				return corrupt(StablePath(dir), j, err)
			}
			logs = append(logs, l)
		}
		if err := w.StoreLogs(logs); err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, WALDir(dir)); err != nil {
		return err
	}
	return SyncDir(dir)
}

func corrupt(path string, index uint64, err error) error {
	var ce *CorruptError
	if errors.As(err, &ce) {
		return ce
	}
	return &CorruptError{Path: path, What: fmt.Sprintf("log entry %d: %v", index, err)}
}

// openBolt opens raft.db. Log compaction frees many pages; a synced freelist makes every
// later commit write it out, so the freelist is rebuilt at open instead, as Consul does.
func openBolt(path string, readOnly bool) (b *raftboltdb.BoltStore, err error) {
	if err := checkBoltFile(path); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil { // bbolt panics on some damaged pages
			b, err = nil, &CorruptError{Path: path, What: fmt.Sprint(r)}
		}
	}()
	b, err = raftboltdb.New(raftboltdb.Options{Path: path, NoSync: readOnly,
		BoltOptions: &bbolt.Options{Timeout: time.Second, ReadOnly: readOnly, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("persistence: %s is in use by another process", path)
		}
		if errors.Is(err, bbolt.ErrInvalid) || errors.Is(err, bbolt.ErrChecksum) || errors.Is(err, bbolt.ErrVersionMismatch) {
			return nil, &CorruptError{Path: path, What: err.Error()}
		}
		return nil, fmt.Errorf("persistence: open %s: %w", path, err)
	}
	if !readOnly {
		// The term and vote a run killed during bbolt's commit left in the page cache are
		// what raft reads now: on the disk before raft acts on them (the WAL does the same
		// with the frames it replays).
		if err := b.Sync(); err != nil {
			b.Close()
			return nil, fmt.Errorf("persistence: fdatasync of %s: %w", path, err)
		}
	}
	return b, nil
}

// legacyLog returns the log raft.db holds, from a zkraft before the transaction log:
// with checksums if it is marked so, plain if it was written before checksums.
func legacyLog(bolt *raftboltdb.BoltStore, path string) (raft.LogStore, error) {
	mark, err := bolt.Get(checksumKey)
	if err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return nil, fmt.Errorf("persistence: %s: %w", path, err)
	}
	switch string(mark) {
	case checksumCRC32C:
		return &checksumLog{inner: bolt, path: path}, nil
	case "":
		return bolt, nil
	}
	return nil, &CorruptError{Path: path, What: fmt.Sprintf("unknown log checksum %q", mark)}
}

// Close closes the transaction log and raft.db.
func (s *Store) Close() error {
	var err error
	if s.wal != nil {
		err = s.wal.Close()
	}
	if s.bolt != nil {
		if berr := s.bolt.Close(); err == nil {
			err = berr
		}
	}
	return err
}

// OpenReadOnly opens a stopped server's store, or a copy of one (a backup), to read
// it: export and restore. It creates and changes nothing under dir, so a backup stays
// as it was and one on read-only media can be read. It checks what Open checks, except
// that a frame a crash cut short at the log's end is left in place, unread. The store
// has no Snapshots (read the newest with OpenNewestSnapshot) and, for a backup that
// `zkraft backup` wrote (snapshots alone), no Stable and an empty Log.
func OpenReadOnly(dir string) (*Store, error) {
	s, err := openReadOnly(dir)
	if err != nil {
		return nil, err
	}
	if err := s.verify(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openReadOnly opens what dir holds of a store, read-only and unchecked. raft.db, when
// there is one, is opened for its lock too: a running server holds it.
func openReadOnly(dir string) (*Store, error) {
	s := &Store{Dir: dir}
	hasBolt, hasWAL, hasSnaps := exists(StablePath(dir)), exists(WALDir(dir)), exists(SnapshotDir(dir))
	if !hasBolt && !hasWAL && !hasSnaps {
		return nil, fmt.Errorf("persistence: no zkraft store in %s", dir)
	}
	var err error
	if hasBolt {
		if s.bolt, err = openBolt(StablePath(dir), true); err != nil {
			return nil, err
		}
		s.Stable = s.bolt
	}
	switch {
	case hasWAL:
		if s.wal, err = OpenWAL(WALDir(dir), 0, true); err == nil && s.bolt != nil {
			err = checkLastSegment(dir, s.wal, s.bolt)
		}
		s.Log = s.wal
	case hasBolt:
		s.Log, err = legacyLog(s.bolt, StablePath(dir))
	default:
		s.Log = raft.NewInmemStore()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// OpenLog opens the log of a stopped server's store read-only, for tools: the
// transaction log, or raft.db's log for a store no zkraft since has opened. raft.db is
// opened too, for its lock: a running server holds it.
func OpenLog(dir string) (raft.LogStore, func() error, error) {
	s, err := openReadOnly(dir)
	if err != nil {
		return nil, nil, err
	}
	return s.Log, s.Close, nil
}
