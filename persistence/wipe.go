package persistence

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// StoreDir is where a server keeps its store inside its data dir (myid stays beside it).
func StoreDir(dataDir string) string { return filepath.Join(dataDir, "zkraft") }

// Wipe moves a member's store aside, to DATADIR/zkraft.wiped-<time>, so the member starts
// empty and is rebuilt from the leader (Raft sends it a snapshot and the log after it).
// Only a cluster member can be rebuilt so; a standalone server's store is all there is.
// Wipe refuses while a server holds the store open. It returns where the store went.
func Wipe(dataDir string, now time.Time) (string, error) {
	dir := StoreDir(dataDir)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("persistence: no store in %s", dataDir)
	}
	if f, err := os.OpenFile(LogPath(dir), os.O_RDWR, 0); err == nil {
		// bbolt holds an exclusive flock on raft.db while a server runs.
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != nil {
			f.Close()
			return "", fmt.Errorf("persistence: %s is in use: stop the server first", LogPath(dir))
		}
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
	to := dir + ".wiped-" + now.UTC().Format("20060102-150405")
	if err := os.Rename(dir, to); err != nil {
		return "", fmt.Errorf("persistence: %w", err)
	}
	return to, nil
}
