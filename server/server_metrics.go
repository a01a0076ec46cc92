package server

import (
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
)

// serverMetrics are those of ZooKeeper's ServerMetrics that zkraft can give true values:
// summaries (summary.go) and counters, under ZooKeeper's names, fed where the same thing
// happens here. mntr prints them after its other values; /metrics serves the summaries
// as Prometheus summaries and the counters as counters; srst resets them all, as
// ServerMetrics.resetAll does. ZooKeeper's other metrics (its request processors' queues,
// Zab's internals) have no counterpart and are left out; the JVM's memory areas are on
// /metrics only, as ZooKeeper's Prometheus provider has them (metrics_jvm_memory.go).
type serverMetrics struct {
	// readLatency and updateLatency split the request latency: a request with a
	// transaction (a write, createSession and closeSession, failed ones too, but not one
	// the request throttle refused) is an update, anything else (reads, sync, pings) a
	// read, as ServerStats.updateLatency splits it (Server.observe).
	readLatency, updateLatency summary
	fsyncTime                  summary // each fdatasync of the transaction log, ms
	snapshotTime               summary // each snapshot written, ms
	electionTime               summary // each election a voting member waited through, ms
	// The watchers each event fires, by event type (node_created_watch_count ...).
	createdWatchers, deletedWatchers, changedWatchers, childrenWatchers summary
	// The state loaded at the start (quorum.Figures.Loaded), ms but for the count of
	// transactions: the whole, the snapshot, the log's transactions replayed after it.
	dbInitTime, snapLoadTime, txnsLoadTime, txnsLoaded summary
	// A cluster member's time without serving, from looking for a leader to being
	// synced with it or established as it, ms; a follower's sync; a leader's part.
	unavailableTime, followerSyncTime, leaderUnavailableTime summary
	// The age of a transaction, from its leader's stamp (ms): as a follower stores it
	// (proposal_latency), as the leader applies it once committed (quorum_ack_latency),
	// as a follower applies it (commit_propagation_latency), and as any member applies
	// it (propagation_latency).
	proposalLatency, quorumAckLatency, commitPropagationLatency, propagationLatency summary
	// How much longer than asked each sleep of the pause monitor took, ms
	// (pause_monitor.go; jvm_pause_time_ms).
	pauseTime summary

	lookingCount          atomic.Int64  // times a cluster member was without a leader
	bytesReceived         paddedCounter // every frame's bytes, its length prefix included
	responseBytes         paddedCounter // the replies to requests, without their length prefix
	watchBytes            paddedCounter // the notifications sent, without their length prefix
	staleSessionsExpired  atomic.Int64  // sessions the leader closed for their timeout
	sessionlessExpired    atomic.Int64  // connections closed for sending no handshake in time
	unsuccessfulHandshake atomic.Int64  // TLS handshakes that failed
	connectionDrops       atomic.Int64  // connections the client closed (its end of stream read)
	connectionRevalidates atomic.Int64  // handshakes that reattach a session
	insecureAdmin         atomic.Int64  // plain HTTP connections to a unified AdminServer port
	tlsHandshakeExceeded  atomic.Int64  // TLS connections closed over the handshake limit (tls_guard.go)
	cnxnClosedNotRunning  atomic.Int64  // secure connections dropped before their handshake while nothing served
	// Transactions the leader proposed and applied once committed, and those a follower
	// received and applied (paddedCounter: added to on every write).
	proposals, commits, learnerProposals, learnerCommits paddedCounter
	snapSyncs                                            atomic.Int64 // snapshots the leader sent a member
	diffSyncs                                            atomic.Int64 // members' new streams the leader heard from
}

// paddedCounter is a counter on a cache line of its own: every connection adds to it,
// from the goroutines that read requests, answer them and deliver events.
type paddedCounter struct {
	atomic.Int64
	_ [56]byte
}

// figures are the hooks quorum tells these metrics through.
func (m *serverMetrics) figures() quorum.Figures {
	return quorum.Figures{
		LogSynced:       func(took time.Duration) { m.fsyncTime.record(took.Milliseconds()) },
		SnapshotTaken:   func(took time.Duration) { m.snapshotTime.record(took.Milliseconds()) },
		Looking:         func() { m.lookingCount.Add(1) },
		Elected:         func(took time.Duration) { m.electionTime.record(took.Milliseconds()) },
		SessionsExpired: func(n int) { m.staleSessionsExpired.Add(int64(n)) },
		Serving:         m.serving,
		Loaded:          m.loaded,
		Proposed:        func() { m.proposals.Add(1) },
		Received: func(age int64) {
			m.learnerProposals.Add(1)
			m.proposalLatency.record(age)
		},
		Committed:     m.committed,
		SnapshotSent:  func() { m.snapSyncs.Add(1) },
		LearnerJoined: func() { m.diffSyncs.Add(1) },
	}
}

func (m *serverMetrics) serving(leading bool, took, down time.Duration) {
	m.unavailableTime.record(down.Milliseconds())
	if leading {
		m.leaderUnavailableTime.record(down.Milliseconds())
	} else {
		m.followerSyncTime.record(took.Milliseconds()) // an observer's -1 is dropped
	}
}

func (m *serverMetrics) loaded(snap, txns time.Duration, n int) {
	m.snapLoadTime.record(snap.Milliseconds())
	if n >= 0 {
		m.txnsLoadTime.record(txns.Milliseconds())
		m.txnsLoaded.record(int64(n))
	}
	m.dbInitTime.record((snap + txns).Milliseconds())
}

// committed counts a transaction applied (quorum.Figures.Committed).
func (m *serverMetrics) committed(role quorum.Role, age int64) {
	switch role {
	case quorum.Leading:
		m.commits.Add(1)
		m.quorumAckLatency.record(age)
	case quorum.Learner:
		m.learnerCommits.Add(1)
		m.commitPropagationLatency.record(age)
	}
	m.propagationLatency.record(age)
}

// fired counts the watchers one event fired (watch.Registry.ObserveFired).
func (m *serverMetrics) fired(evType int32, n int) {
	switch evType {
	case jute.EventNodeCreated:
		m.createdWatchers.record(int64(n))
	case jute.EventNodeDeleted:
		m.deletedWatchers.record(int64(n))
	case jute.EventNodeDataChanged:
		m.changedWatchers.record(int64(n))
	case jute.EventNodeChildrenChanged:
		m.childrenWatchers.record(int64(n))
	}
}

// namedSummary is a summary with its name and whether mntr prints its percentiles.
type namedSummary struct {
	name        string
	s           *summary
	percentiles bool
	help        string
}

func (m *serverMetrics) summaries() []namedSummary {
	return []namedSummary{
		{"readlatency", &m.readLatency, true, "read request latency, ms"},
		{"updatelatency", &m.updateLatency, true, "update request latency, ms"},
		{"fsynctime", &m.fsyncTime, false, "fdatasync time of the transaction log, ms"},
		{"snapshottime", &m.snapshotTime, false, "time to write a snapshot, ms"},
		{"election_time", &m.electionTime, false, "time between losing a leader and knowing one again, ms"},
		{"node_created_watch_count", &m.createdWatchers, false, "watchers fired by a node's creation"},
		{"node_deleted_watch_count", &m.deletedWatchers, false, "watchers fired by a node's deletion"},
		{"node_changed_watch_count", &m.changedWatchers, false, "watchers fired by a change of a node's data"},
		{"node_children_watch_count", &m.childrenWatchers, false, "watchers fired by a change of a node's children"},
		{"dbinittime", &m.dbInitTime, false, "time to load the state at the start, ms"},
		{"startup_snap_load_time", &m.snapLoadTime, false, "time to load the snapshot at the start, ms"},
		{"startup_txns_load_time", &m.txnsLoadTime, false, "time to apply the log after the snapshot at the start, ms"},
		{"startup_txns_loaded", &m.txnsLoaded, false, "transactions of the log applied after the snapshot at the start"},
		{"unavailable_time", &m.unavailableTime, false, "time from looking for a leader to serving, ms"},
		{"leader_unavailable_time", &m.leaderUnavailableTime, false, "a leader's time from looking for a leader to serving, ms"},
		{"follower_sync_time", &m.followerSyncTime, false, "a follower's time from knowing its leader to being synced with it, ms"},
		{"proposal_latency", &m.proposalLatency, true, "age of a transaction a follower stores, ms"},
		{"quorum_ack_latency", &m.quorumAckLatency, true, "age of a transaction the leader applies once committed, ms"},
		{"commit_propagation_latency", &m.commitPropagationLatency, true, "age of a transaction a follower applies, ms"},
		{"propagation_latency", &m.propagationLatency, true, "age of a transaction applied, ms"},
		{"jvm_pause_time_ms", &m.pauseTime, true, "pauses of the server process or its host the pause monitor saw, ms"},
	}
}

// namedCounter is a counter with its name.
type namedCounter struct {
	name string
	c    *atomic.Int64
	help string
}

func (m *serverMetrics) counters() []namedCounter {
	return []namedCounter{
		{"looking_count", &m.lookingCount, "times this member was without a leader"},
		{"bytes_received_count", &m.bytesReceived.Int64, "bytes received from clients"},
		{"response_bytes", &m.responseBytes.Int64, "bytes of replies to requests"},
		{"watch_bytes", &m.watchBytes.Int64, "bytes of watch notifications"},
		{"stale_sessions_expired", &m.staleSessionsExpired, "sessions expired"},
		{"sessionless_connections_expired", &m.sessionlessExpired, "connections closed without a session in time"},
		{"unsuccessful_handshake", &m.unsuccessfulHandshake, "TLS handshakes that failed"},
		{"connection_drop_count", &m.connectionDrops, "connections the client closed"},
		{"connection_revalidate_count", &m.connectionRevalidates, "handshakes that reattached a session"},
		{"insecure_admin_count", &m.insecureAdmin, "plain HTTP connections to the AdminServer's unified port"},
		{"tls_handshake_exceeded", &m.tlsHandshakeExceeded, "TLS connections closed over the limit of handshakes in progress"},
		{"cnxn_closed_without_zk_server_running", &m.cnxnClosedNotRunning, "secure connections closed before their TLS handshake while nothing served"},
		{"proposal_count", &m.proposals.Int64, "transactions proposed as leader"},
		{"commit_count", &m.commits.Int64, "transactions committed as leader"},
		{"learner_proposal_received_count", &m.learnerProposals.Int64, "transactions received from the leader"},
		{"learner_commit_received_count", &m.learnerCommits.Int64, "transactions committed as a learner"},
		{"snap_count", &m.snapSyncs, "snapshots sent to members as leader"},
		{"diff_count", &m.diffSyncs, "members synced by the log as leader"},
	}
}

// metrics are mntr's values of these metrics, counters first.
func (m *serverMetrics) metrics() []metric {
	var out []metric
	for _, c := range m.counters() {
		out = append(out, metric{c.name, c.c.Load()})
	}
	for _, s := range m.summaries() {
		out = append(out, s.s.metrics(s.name, s.percentiles)...)
	}
	return out
}

// reset is srst's part.
func (m *serverMetrics) reset() {
	for _, c := range m.counters() {
		c.c.Store(0)
	}
	for _, s := range m.summaries() {
		s.s.reset()
	}
}
