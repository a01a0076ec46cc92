// Package persistence owns zkraft's durable formats: a server's store (the Raft log in
// zkraft's transaction log, wal*.go; the stable store in raft-boltdb on bbolt;
// hashicorp/raft's snapshot store holding the state machine snapshot of state.go), the
// move of a log an older zkraft kept in bbolt, its verification at
// open, offline access for tools, and Apache ZooKeeper's on-disk formats for import and
// export. It knows the tree and the session table only through their snapshot formats;
// it knows nothing of Raft's protocol, the network or clients.
//
// # zkraft's store
//
// DATADIR/zkraft holds log/, raft.db and snapshots/ (see Store). The transaction log's
// frames and entries carry CRC-32Cs (wal_format.go); a snapshot's state.bin is covered by
// the CRC-64 in its meta.json, and the tree and session sections inside it by their own
// CRC-32C. Open refuses a damaged store with a CorruptError that names the file and the
// fault. A write is acknowledged only after its frame is fdatasynced on a quorum (but
// with ZooKeeper's forceSync=no, an operator's opt-in: force_sync.go).
//
// Crash recovery makes what a killed run left durable before the store is used: the
// replayed segments and the log directory are synced, raft.db too. Two limits remain:
// replay reads through the page cache, so after a failed fdatasync (the log then takes
// no more writes) a restart can trust pages the kernel marked clean though they never
// reached the disk (reboot the machine, or wipe the member, after an I/O error); and the
// snapshot store relies on a file system that orders directory updates (ext4, XFS).
//
// # Apache ZooKeeper 3.x data directories
//
// ReadZooKeeper reads the on-disk format of Apache ZooKeeper 3.5–3.9 (checked against
// the 3.8 sources) for `zkraft import --from-zookeeper`; WriteStateAsZooKeeper and
// ZKFrozenWriter write a snapshot of it from a frozen view of the tree, a node at a time,
// for `zkraft export --to-zookeeper` and the AdminServer's snapshot command.
// WriteZooKeeperSnapshot writes one from a ZKState held whole (ZKStateOf makes one of
// zkraft's state): tests use the pair to make ZooKeeper data dirs. ZooKeeper keeps
// its files in dataDir/version-2 (dataLogDir/version-2 for the logs when set). All
// integers are big-endian Jute: int 4 bytes, long 8, boolean 1, buffer and ustring an
// int length then the bytes (-1 = null), vector an int count then the items.
//
// A snapshot, snapshot.<hex zxid>, is a FileHeader (int magic "ZKSN", int version 2,
// long dbid -1); the sessions (int count, then long id, int timeout); the ACL cache
// (int count, then long id, vector<ACL>; id -1 means world:anyone ALL and is not
// stored); the nodes in pre-order as (ustring path, buffer data, long acl id,
// StatPersisted) with the root's path "" and the end marked by the path "/"; then
// a seal: the Adler-32 of every byte before it as a long, and the string "/". With
// zookeeper.digest.enabled (the default since 3.6) a ZxidDigest (long zxid, int
// version, long digest; a ustring digest before version 2) and a second seal over
// everything before it follow; older readers ignore them and 3.6+ tolerates their
// absence. ZooKeeper 3.9 (zookeeper.serializeLastProcessedZxid.enabled, its default)
// then writes the last processed zxid (long) and a third seal, which its restore
// command reads the zxid from; 3.8 and older stop before it. zkraft writes all three.
// The zxid of a snapshot is the one in its file name, and the tree may be fuzzy:
// transactions above that zxid are replayed on top of it.
//
// A transaction log, log.<hex first zxid>, is a FileHeader ("ZKLG", 2, dbid) and then
// records: long Adler-32 of the entry, buffer entry, and the byte 'B'. The entry is a
// TxnHeader (long clientId, int cxid, long zxid, long time, int type), the record of
// that type (CreateTxn, CreateContainerTxn, CreateTTLTxn, DeleteTxn, SetDataTxn,
// SetACLTxn, CheckVersionTxn, ErrorTxn, MultiTxn, CreateSessionTxn, CloseSessionTxn)
// and, since 3.6, possibly a TxnDigest. Log files are preallocated with zeros, so an
// entry of length 0 ends the file, as does a partial last record (a crash mid-write).
// A checksum mismatch is an error.
//
// Snapshots may be compressed when zookeeper.snapshot.compression.method is set
// (snapshot.<zxid>.gz or .snappy). The default is none; gzip is read, snappy is not.
// zkraft always writes an uncompressed snapshot.
//
// The stored stat is ZooKeeper's StatPersisted, the same as zkraft's: cversion counts
// child creations (clients see cversion*2 - numChildren), and ephemeralOwner is the
// session id, Long.MIN_VALUE for a container, or 0xFF00000000000000|ttl for a TTL node.
package persistence
