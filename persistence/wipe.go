package persistence

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

// StoreDir is where a server keeps its store inside its data dir (myid stays beside it).
func StoreDir(dataDir string) string { return filepath.Join(dataDir, "zkraft") }

// Wipe moves a member's store aside, to DATADIR/zkraft.wiped-<time>, so the member starts
// empty and is rebuilt from the leader (Raft sends it a snapshot and the log after it).
// Only a cluster member can be rebuilt so: Wipe refuses the store of a server that is
// the only voter its store knows (a standalone server), which is all there is of the
// data, and refuses while a server holds the store open. It returns where the store went.
func Wipe(dataDir string, now time.Time) (string, error) {
	dir := StoreDir(dataDir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("persistence: no store in %s", dataDir)
	}
	if f, err := os.OpenFile(StablePath(dir), os.O_RDWR, 0); err == nil {
		// bbolt holds an exclusive flock on raft.db while a server runs.
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			f.Close()
			return "", fmt.Errorf("persistence: %s is in use: stop the server first", StablePath(dir))
		}
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	if voters, known := storeVoters(dir); known && voters < 2 {
		return "", fmt.Errorf("persistence: %s is the store of a server that is its cluster's only voter (a standalone server): "+
			"it is the only copy of the data, and no leader would rebuild it. Not wiped; restore the server from a backup "+
			"instead, or move the store aside by hand to start it empty (docs/operations.md)", dir)
	}
	to := dir + ".wiped-" + now.UTC().Format("20060102-150405")
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("persistence: %w", err)
	}
	return to, nil
}

// storeVoters counts the voters of the newest Raft configuration the store in dir holds:
// its newest snapshot's, or a later one in as much of its log as can be read (a damaged
// store is what wipe is for). known is false when the store holds none (a member that
// never got one).
func storeVoters(dir string) (voters int, known bool) {
	var conf *raft.Configuration
	var from uint64
	if snaps, err := snapshotMetas(SnapshotDir(dir)); err == nil && len(snaps) > 0 {
		conf, from = &snaps[0].Configuration, snaps[0].Index+1
	}
	if s, err := openReadOnly(dir); err == nil {
		first, _ := s.Log.FirstIndex()
		last, _ := s.Log.LastIndex()
		for i := max(first, from); last > 0 && i <= last; i++ {
			var l raft.Log
			if s.Log.GetLog(i, &l) != nil {
				break
			}
			if l.Type == raft.LogConfiguration {
				c := raft.DecodeConfiguration(l.Data)
				conf = &c
			}
		}
		s.Close()
	}
	if conf == nil {
		return 0, false
	}
	for _, sv := range conf.Servers {
		if sv.Suffrage == raft.Voter {
			voters++
		}
	}
	return voters, true
}

// BackupSnapshot copies the newest finished snapshot of the store in dataDir into
// to/zkraft/snapshots/, which `zkraft restore --from to` then reads. It works while the
// server runs: a snapshot directory is written under a .tmp name and never changed once
// renamed. The backup holds the state as of that snapshot (snapCount entries at most
// behind). It returns the snapshot's index.
func BackupSnapshot(dataDir, to string) (uint64, error) {
	snaps, err := snapshotMetas(SnapshotDir(StoreDir(dataDir)))
	if err != nil {
		return 0, err
	}
	if len(snaps) == 0 {
		return 0, fmt.Errorf("persistence: no snapshot in %s yet: a server writes its first once snapCount entries "+
			"(100000 by default) are in its log. Until then take the state with the AdminServer's snapshot command "+
			"(/commands/snapshot, which zkraft import reads), or copy a stopped member's data dir (docs/operations.md)", dataDir)
	}
	m := snaps[0]
	from := filepath.Join(SnapshotDir(StoreDir(dataDir)), m.dir)
	dest := filepath.Join(SnapshotDir(StoreDir(to)), m.dir)
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return 0, err
	}
	for _, name := range []string{"meta.json", "state.bin"} {
		if err := copyFile(filepath.Join(from, name), filepath.Join(dest, name)); err != nil {
			return 0, err
		}
	}
	// The copy is checked as a start would check it.
	sr := &Store{Dir: StoreDir(to)}
	snap, err := sr.OpenNewestSnapshot()
	if err != nil {
		return 0, err
	}
	defer snap.Close()
	if err := snap.Verify(); err != nil {
		return 0, err
	}
	return m.Index, nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
