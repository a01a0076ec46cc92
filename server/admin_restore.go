package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// ZooKeeper 3.9's restore admin command (POST /commands/restore, alias rest): the body
// is a ZooKeeper snapshot, as the snapshot command streams it, and it replaces the
// state. As in 3.9 it needs authentication and ALL on "/" (401, 403), is rate limited to
// one every zookeeper.admin.rateLimiterIntervalInMS on its own (429), is off with
// zookeeper.admin.restore.enabled=false (503), and answers last_zxid.
//
// Where zkraft differs (docs/compatibility.md): the state is replaced on every member
// of a cluster through raft (quorum/user_restore.go), so the command runs on the leader
// and a follower refuses it; the new state's zxid is past every zxid the cluster gave
// before, where ZooKeeper goes back to the snapshot's; the cluster's /zookeeper/config
// stays; every member's clients are disconnected and come back to the new state; a
// snapshot without 3.9's last-zxid section is taken too (its zxid is not used); a
// failure says why in "error" where 3.9 leaves it null; GET answers 405, where 3.9's
// servlet fails on it.

// restoreTimeout bounds raft's queueing of the restore and of the no-op after it.
const restoreTimeout = time.Minute

func (s *Server) serveAdminRestore(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, errText any, extra map[string]any) {
		out := map[string]any{"command": "restore", "error": errText}
		for k, v := range extra {
			out[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		body := jacksonJSON(out, false)
		w.WriteHeader(status)
		w.Write(body)
	}
	if !s.serving() {
		answer(http.StatusOK, notServing, nil)
		return
	}
	if status, why := s.adminAuthorize(r, jute.PermAll, "/"); status != http.StatusOK {
		answer(status, why, nil)
		return
	}
	if !s.cfg.AdminAuth.RestoreEnabled {
		s.log.Warn("Restore command is disabled")
		answer(http.StatusServiceUnavailable, nil, nil)
		return
	}
	if !s.adminRestore.allow(s.cfg.AdminAuth.RateLimitInterval) {
		s.log.Warn("Restore request was rate limited")
		answer(http.StatusTooManyRequests, nil, nil)
		return
	}
	zxid, err := s.restoreFrom(r.Body, r.ContentLength)
	if err != nil {
		s.log.Warn("restore admin command failed", "err", err)
		answer(http.StatusInternalServerError, err.Error(), nil)
		return
	}
	answer(http.StatusOK, nil, map[string]any{"last_zxid": zxid})
}

// maxRestorePrealloc caps the buffer a restore's Content-Length makes ready at once.
const maxRestorePrealloc = 1 << 30

// restoreFrom reads a ZooKeeper snapshot from body (of size bytes, -1 when unknown)
// and makes it the state.
func (s *Server) restoreFrom(body io.Reader, size int64) (int64, error) {
	start := time.Now()
	b, err := readSnapshotBody(body, size)
	if err != nil {
		return 0, fmt.Errorf("reading the snapshot: %w", err)
	}
	// b is not used after: the parse lets its memory go once it has read it.
	st, err := persistence.ReadZooKeeperSnapshot(b)
	if err != nil {
		return 0, fmt.Errorf("not a ZooKeeper snapshot: %w", err)
	}
	snapZxid := st.LastZxid
	var nodesBefore, sessionsBefore int
	s.node.FSM.Read(func(t *datatree.Tree, ss *session.Table) { nodesBefore, sessionsBefore = t.NodeCount(), ss.Len() })
	before := s.node.FSM.LastZxid()
	zxid, err := s.node.RestoreState(st, restoreTimeout)
	if errors.Is(err, quorum.ErrRestoreNotLeader) {
		if id, ok := s.node.LeaderID(); ok {
			return 0, fmt.Errorf("%w (server.%s)", err, id)
		}
	}
	if err != nil {
		return 0, err
	}
	// The snapshot's bytes, its parse and the state encoded for raft were each about the
	// size of the tree: give that memory back to the system now, not over minutes.
	debug.FreeOSMemory()
	var nodes, sessions int
	s.node.FSM.Read(func(t *datatree.Tree, ss *session.Table) { nodes, sessions = t.NodeCount(), ss.Len() })
	s.log.Info("state restored from a snapshot", "snapshot_zxid", fmt.Sprintf("0x%x", snapZxid),
		"zxid_before", fmt.Sprintf("0x%x", before), "zxid", fmt.Sprintf("0x%x", zxid),
		"nodes_before", nodesBefore, "sessions_before", sessionsBefore,
		"nodes", nodes, "sessions", sessions, "took", time.Since(start).Round(time.Millisecond))
	return zxid, nil
}

// readSnapshotBody reads body into one buffer of the announced size where there is one,
// not one that grows by copies (each as large as the snapshot).
func readSnapshotBody(body io.Reader, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), maxRestorePrealloc)+bytes.MinRead))
	_, err := buf.ReadFrom(body)
	return buf.Bytes(), err
}
