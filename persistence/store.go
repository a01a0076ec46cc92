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
//	raft.db     the Raft log and stable store: raft-boltdb on bbolt, fsynced on every
//	            append; every log entry carries a CRC-32C (see checksumLog)
//	snapshots/  hashicorp/raft's file snapshot store: one directory per snapshot with
//	            meta.json (index, term, membership, size, CRC-64 of state.bin) and
//	            state.bin (quorum's state machine snapshot, see quorum/snapshot.go)
//
// Open refuses a store that is damaged or has a gap between its newest snapshot and
// its log, with a *CorruptError naming the file: zkraft never starts from partial data.
type Store struct {
	Dir       string
	Log       raft.LogStore // checksummed; wrap it in raft.NewLogCache
	Stable    raft.StableStore
	Snapshots *raft.FileSnapshotStore
	bolt      *raftboltdb.BoltStore
}

// CorruptError says which file of a store is damaged and how.
type CorruptError struct {
	Path string
	What string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("persistence: %s is damaged: %s (refusing to start from it; a cluster member can be wiped with `zkraft wipe` and rebuilt from the leader, see docs/operations.md)", e.Path, e.What)
}

// LogPath and SnapshotDir name the store's files under dir.
func LogPath(dir string) string     { return filepath.Join(dir, "raft.db") }
func SnapshotDir(dir string) string { return filepath.Join(dir, "snapshots") }

// Open opens (creating if needed) the store in dir, keeping retain snapshots, and
// verifies it (see Verify).
func Open(dir string, retain int, logger hclog.Logger) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bolt, err := openBolt(LogPath(dir), false)
	if err != nil {
		return nil, err
	}
	s := &Store{Dir: dir, Stable: bolt, bolt: bolt}
	log, err := checksummed(bolt, LogPath(dir))
	if err != nil {
		bolt.Close()
		return nil, err
	}
	s.Log = log
	if s.Snapshots, err = raft.NewFileSnapshotStoreWithLogger(dir, retain, logger); err != nil {
		bolt.Close()
		return nil, err
	}
	if err := s.verify(); err != nil {
		bolt.Close()
		return nil, err
	}
	return s, nil
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
	return b, nil
}

// checksummed returns the log of bolt with checksums, or the plain log of a store
// written before checksums (entries but no mark). A new store is marked.
func checksummed(bolt *raftboltdb.BoltStore, path string) (raft.LogStore, error) {
	mark, err := bolt.Get(checksumKey)
	if err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		return nil, fmt.Errorf("persistence: %s: %w", path, err)
	}
	if string(mark) == checksumCRC32C {
		return &checksumLog{inner: bolt, path: path}, nil
	}
	if len(mark) > 0 {
		return nil, &CorruptError{Path: path, What: fmt.Sprintf("unknown log checksum %q", mark)}
	}
	last, err := bolt.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("persistence: %s: %w", path, err)
	}
	if last > 0 {
		return bolt, nil // written before entries had checksums
	}
	if err := bolt.Set(checksumKey, []byte(checksumCRC32C)); err != nil {
		return nil, fmt.Errorf("persistence: %s: %w", path, err)
	}
	return &checksumLog{inner: bolt, path: path}, nil
}

// Close closes raft.db.
func (s *Store) Close() error { return s.bolt.Close() }

// OpenLog opens the log of a stopped server's store read-only, for tools. Entries come
// back without their checksums, which are checked as they are read.
func OpenLog(dir string) (raft.LogStore, func() error, error) {
	bolt, err := openBolt(LogPath(dir), true)
	if err != nil {
		return nil, nil, err
	}
	mark, err := bolt.Get(checksumKey)
	if err != nil && !errors.Is(err, raftboltdb.ErrKeyNotFound) {
		bolt.Close()
		return nil, nil, err
	}
	if string(mark) == checksumCRC32C {
		return &checksumLog{inner: bolt, path: LogPath(dir)}, bolt.Close, nil
	}
	return bolt, bolt.Close, nil
}
