package quorum

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
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
type raftLog struct {
	log *slog.Logger

	mu sync.Mutex
	// heartbeatErr is the last heartbeat error per peer address, for the tracker's line.
	heartbeatErr map[string]string
}

// newRaftLog returns the sink and the hclog logger raft is given, which writes nothing
// itself and hands every line to the sink.
func newRaftLog(log *slog.Logger) (*raftLog, hclog.Logger) {
	l := &raftLog{log: log, heartbeatErr: map[string]string{}}
	h := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "raft", Level: hclog.Off, Output: io.Discard})
	h.RegisterSink(l)
	return l, h
}

// Accept implements hclog.SinkAdapter.
func (l *raftLog) Accept(name string, level hclog.Level, msg string, args ...interface{}) {
	lv := slog.LevelDebug
	if level >= hclog.Error && !perAttempt[msg] {
		lv = slog.LevelError
	}
	if msg == "failed to heartbeat to" {
		l.noteHeartbeatErr(args)
	}
	if !l.log.Enabled(context.Background(), lv) {
		return
	}
	l.log.Log(context.Background(), lv, msg, append([]any{"logger", name}, args...)...)
}

func (l *raftLog) noteHeartbeatErr(args []interface{}) {
	var peer, err string
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "peer":
			peer = fmt.Sprint(args[i+1])
		case "error":
			err = fmt.Sprint(args[i+1])
		}
	}
	l.mu.Lock()
	l.heartbeatErr[peer] = err
	l.mu.Unlock()
}

func (l *raftLog) lastHeartbeatErr(addr string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heartbeatErr[addr]
}

// reachability turns the leader's heartbeat observations into a line per change: a
// peer becoming unreachable and reachable again, each logged once at WARN, and while it
// stays unreachable a count of the failed attempts at most once per interval.
type reachability struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration
	// why is the reason of the last failure to reach a peer, if known.
	why func(id raft.ServerID) string

	down map[raft.ServerID]*outage // only the observing goroutine touches it
}

type outage struct {
	since, reported time.Time
	failures        int
}

func newReachability(log *slog.Logger, now func() time.Time, every time.Duration, why func(raft.ServerID) string) *reachability {
	return &reachability{log: log, now: now, every: every, why: why, down: map[raft.ServerID]*outage{}}
}

func (r *reachability) failed(id raft.ServerID) {
	now := r.now()
	o := r.down[id]
	if o == nil {
		r.down[id] = &outage{since: now, reported: now, failures: 1}
		r.log.Warn("raft peer unreachable", "peer", string(id), "error", r.why(id))
		return
	}
	o.failures++
	if now.Sub(o.reported) >= r.every {
		o.reported = now
		r.log.Warn("raft peer still unreachable", "peer", string(id), "failed_attempts", o.failures,
			"down_for", now.Sub(o.since).Round(time.Second), "error", r.why(id))
	}
}

func (r *reachability) resumed(id raft.ServerID) {
	o := r.down[id]
	if o == nil {
		return
	}
	delete(r.down, id)
	r.log.Warn("raft peer reachable again", "peer", string(id), "failed_attempts", o.failures,
		"down_for", r.now().Sub(o.since).Round(time.Millisecond))
}

// forget drops every outage: only a leader heartbeats, so once this server stops
// leading no observation would end them.
func (r *reachability) forget() { clear(r.down) }

// observePeers feeds raft's observations to r until done is closed.
func observePeers(rf *raft.Raft, self raft.ServerID, r *reachability, done <-chan struct{}) {
	// Not blocking: raft never waits for this goroutine. At a few observations a
	// second per peer the buffer does not fill.
	ch := make(chan raft.Observation, 256)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		switch o.Data.(type) {
		case raft.FailedHeartbeatObservation, raft.ResumedHeartbeatObservation, raft.LeaderObservation, raft.PeerObservation:
			return true
		}
		return false
	})
	rf.RegisterObserver(obs)
	defer rf.DeregisterObserver(obs)
	for {
		select {
		case <-done:
			return
		case o := <-ch:
			switch d := o.Data.(type) {
			case raft.FailedHeartbeatObservation:
				r.failed(d.PeerID)
			case raft.ResumedHeartbeatObservation:
				r.resumed(d.PeerID)
			case raft.LeaderObservation:
				if d.LeaderID != self {
					r.forget()
				}
			case raft.PeerObservation:
				if d.Removed {
					delete(r.down, d.Peer.ID)
				}
			}
		}
	}
}
