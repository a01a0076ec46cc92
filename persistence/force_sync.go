package persistence

// ZooKeeper's forceSync=no: the transaction log is written but never fdatasynced, so a
// write is acknowledged once it is in the page cache. A process that is killed loses
// nothing (the kernel still holds the pages); a machine that crashes or loses power can
// lose acknowledged writes, on every member at once. It is an operator's opt-in, as in
// ZooKeeper (FileTxnLog.commit skips its fsync and its fsync time); the default syncs.
// The log's directory and new segments are still synced, as are raft.db and snapshots.
// A deferred store (wal_deferred.go) is then stored at once: no frame is ever pending.

// syncFrame is the fdatasync of a frame stored durably; tests count it.
var syncFrame = fdatasync

// SkipSyncs makes the WAL skip every fdatasync of its frames. Call it before the log is
// written to.
func (w *WAL) SkipSyncs() { w.noSync = true }

// SkipLogSyncs makes the store's transaction log skip its fdatasyncs (WAL.SkipSyncs).
func (s *Store) SkipLogSyncs() { s.wal.SkipSyncs() }
