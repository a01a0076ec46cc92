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
//	raft.db     the stable store (term, vote): raft-boltdb on bbolt. A store written
//	            before the transaction log existed keeps its log here too; Open moves
//	            it into log/ once.
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
	return w, nil
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
	return syncDir(dir)
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
	err := s.wal.Close()
	if berr := s.bolt.Close(); err == nil {
		err = berr
	}
	return err
}

// OpenLog opens the log of a stopped server's store read-only, for tools: the
// transaction log, or raft.db's log for a store no zkraft since has opened. raft.db is
// opened too, for its lock: a running server holds it.
func OpenLog(dir string) (raft.LogStore, func() error, error) {
	bolt, err := openBolt(StablePath(dir), true)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(WALDir(dir)); err == nil {
		w, err := OpenWAL(WALDir(dir), 0, true)
		if err != nil {
			bolt.Close()
			return nil, nil, err
		}
		return w, func() error { w.Close(); return bolt.Close() }, nil
	}
	log, err := legacyLog(bolt, StablePath(dir))
	if err != nil {
		bolt.Close()
		return nil, nil, err
	}
	return log, bolt.Close, nil
}
