// Package quorum owns consensus: the hashicorp/raft node, the state machine (FSM) that
// applies committed entries to the znode tree and the session table, the log entry
// format, and the leader's duties (session expiry, container and TTL cleanup).
//
// It knows nothing of sockets or the client protocol's framing: the server hands it
// entries and reads through FSM.Read; watches fire into the watch registry, whose
// watchers the server implements.
//
// Entry format and upgrades: an entry is a type byte and a Jute-encoded body (see
// entry.go). A server panics on a type byte it does not know, so a new entry type or
// a changed body gets a new type byte, and a rolling upgrade proposes it only after
// every server runs a version that can apply it.
//
// Commit notices (commit_notice.go): a member applies its log up to a committed entry
// the leader names by (index, term) without waiting for raft to tell it. That is safe
// because of Raft's Log Matching property: a log that holds an entry with that index and
// term holds the leader's entries up to it, and those are committed. It may do so before
// its own write of those entries returns: they are durable on a quorum already, a crash
// loses only this member's copy, which raft sends again, and FSM.Apply skips what was
// applied (a snapshot records the zxid it holds).
//
// Determinism: Apply reads no clock (the proposer stamps Entry.Time), draws no random
// numbers, and lets no map order reach the tree, a result or a snapshot. zxid is the
// Raft index of the entry.
package quorum
