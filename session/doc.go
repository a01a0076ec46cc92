// Package session owns ZooKeeper sessions on the server side: the replicated session
// table (ids, passwords, negotiated timeouts) that lives in the state machine, the
// leader's expiry tracker (deadline buckets, as ZooKeeper's ExpiryQueue), session id
// and password generation as ZooKeeper does them, and timeout negotiation.
//
// It is pure and deterministic: the Table changes only when the state machine applies a
// log entry, its snapshot encoding is byte-for-byte the same on every server, and the
// Tracker reads time only from an injected Clock, so tests advance a ManualClock
// instead of sleeping.
//
// It must not know about sockets, connections, Raft or the data tree: expired ids leave
// through a callback (Tracker.Run), and whoever receives them (the leader, in quorum)
// proposes closeSession entries; removing a session's ephemeral nodes is the tree's job.
// It imports only the standard library.
package session
