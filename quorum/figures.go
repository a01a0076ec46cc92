package quorum

import (
	"sync"
	"time"
)

// Figures are told of the events ZooKeeper's metrics count that happen in quorum (the
// server keeps the counts and prints them in mntr). Each may be nil; each runs on the
// goroutine of the event (raft's, the WAL's syncer, a snapshot's), so it must not block.
type Figures struct {
	// LogSynced: an fdatasync of the transaction log took took (fsynctime).
	LogSynced func(took time.Duration)
	// SnapshotTaken: a snapshot of the state was written, in took (snapshottime).
	SnapshotTaken func(took time.Duration)
	// Looking: this cluster member has no leader, at its start or since it lost the one
	// it had (ZooKeeper's peer going LOOKING: looking_count).
	Looking func()
	// Elected: a voting member that was looking knows its leader again (itself
	// included) took after it began looking (election_time; a ZooKeeper observer
	// records none, nor does a non-voter here).
	Elected func(took time.Duration)
	// SessionsExpired: the leader closes n sessions whose timeout passed
	// (stale_sessions_expired).
	SessionsExpired func(n int)
}

// looking tracks a member's time without a leader for Figures.Looking and Elected.
type looking struct {
	mu    sync.Mutex
	since time.Time // zero while a leader is known
	voter bool
	figs  Figures
}

// lost is told that no leader is known (at the start, or a leader observation without
// one); it counts one look per stretch without a leader.
func (l *looking) lost() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.since.IsZero() {
		return
	}
	l.since = time.Now()
	if l.figs.Looking != nil {
		l.figs.Looking()
	}
}

// found is told that a leader is known.
func (l *looking) found() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.since.IsZero() {
		return
	}
	took := time.Since(l.since)
	l.since = time.Time{}
	if l.voter && l.figs.Elected != nil {
		l.figs.Elected(took)
	}
}
