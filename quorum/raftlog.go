package quorum

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/zkraft/zkraft/persistence"
)

// perAttempt are raft's messages for one failed RPC to a peer. While a member is down
// raft writes them many times a second on the leader (and on candidates), so they go to
// debug; the reachability tracker says once that the peer is unreachable instead.
var perAttempt = map[string]bool{
	"failed to heartbeat to":                  true,
	"failed to appendEntries to":              true,
	"failed to start pipeline replication to": true,
	"failed to pipeline appendEntries":        true,
	"failed to make requestVote RPC":          true,
	"failed to send snapshot to":              true,
}

// raftLog routes the log lines of raft, its transport and its stores into the server's
// slog logger. Errors keep their level, except the per-attempt RPC failures; raft's
// warnings and info go to debug, as they were never shown before (raft logged at
// Error only) and some of them repeat per attempt too.
type raftLog struct{ log *slog.Logger }

// newRaftLog returns the hclog logger raft is given: it writes nothing itself and hands
// every line to a raftLog.
func newRaftLog(log *slog.Logger) hclog.Logger {
	h := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "raft", Level: hclog.Off, Output: io.Discard})
	h.RegisterSink(raftLog{log})
	return h
}

// Accept implements hclog.SinkAdapter.
func (l raftLog) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	lv := slog.LevelDebug
	if level >= hclog.Error && !perAttempt[msg] {
		lv = slog.LevelError
	}
	if l.log.Enabled(context.Background(), lv) {
		l.log.Log(context.Background(), lv, msg, append([]any{"logger", name}, args...)...)
	}
}

// defaultFsyncWarning is ZooKeeper's fsync.warningthresholdms.
const defaultFsyncWarning = time.Second

// fsyncWarning is the threshold Config.FsyncWarning asks for: 0 is the default.
func fsyncWarning(d time.Duration) time.Duration {
	if d <= 0 {
		return defaultFsyncWarning
	}
	return d
}

// warnSlowSyncs has the store's transaction log warn of every fdatasync slower than
// threshold (0: the default), as ZooKeeper's does: every write waits for it; and tells
// counted (Figures.LogSyncSlow), if set, of each.
func warnSlowSyncs(store *persistence.Store, threshold time.Duration, log *slog.Logger, counted func()) {
	if log == nil && counted == nil {
		return
	}
	threshold = fsyncWarning(threshold)
	store.WarnSlowSyncs(threshold, func(s persistence.SlowSync) {
		if counted != nil {
			counted()
		}
		if log != nil {
			log.Warn("fsync-ing the transaction log took longer than fsync.warningthresholdms; every write waits for it (a slow or busy disk)",
				"file", s.Path, "took_ms", s.Took.Milliseconds(), "threshold_ms", threshold.Milliseconds())
		}
	})
}
