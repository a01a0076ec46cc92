package quorum

import (
	"sync"
	"time"
)

// Figures are told of events in quorum that ZooKeeper counts in its metrics (the server
// keeps the counts; quorum knows no metric's name). Each may be nil; each runs on the
// goroutine where the event happens (raft's, the WAL's or its syncer's, a snapshot's, the
// leader's duties', or Open's), so it must not block.
type Figures struct {
	// LogSynced: an fdatasync of the transaction log took took.
	LogSynced func(took time.Duration)
	// SnapshotTaken: a snapshot of the state was written, in took.
	SnapshotTaken func(took time.Duration)
	// Looking: this cluster member has no leader, at its start or since it lost the one
	// it had (as a ZooKeeper peer goes LOOKING).
	Looking func()
	// Elected: a voting member that was looking knows its leader again (itself, if it
	// leads); took is the time since it began looking. A non-voter is told nothing, as
	// a ZooKeeper observer records no election time.
	Elected func(took time.Duration)
	// SessionsExpired: the leader closes n sessions whose timeout passed.
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
