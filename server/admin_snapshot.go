package server

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

// ZooKeeper 3.9's snapshot admin command (/commands/snapshot, alias snap): the current
// state as a ZooKeeper snapshot file, streamed to an authenticated caller, so a backup
// needs no shell on the server. As in ZooKeeper 3.9 it needs authentication and ALL on
// "/" (the Authorization header: "digest user:password", "ip", or "x509" over HTTPS with
// a client certificate; super passes; admin_auth.go), answers 401
// without or with bad credentials and 403 without the right, is rate limited to one
// every zookeeper.admin.rateLimiterIntervalInMS (5 minutes by default; 429 otherwise),
// and carries the snapshot's zxid and size in the last_zxid and snapshot_size headers.
// ?streaming=false answers the headers and JSON without the file.
//
// zkraft reports ZooKeeper 3.8 to clients but serves this 3.9 command: a 3.8 AdminServer
// answers "Unknown command" for it, so no 3.8 tool is affected. Its POST counterpart,
// restore, is admin_restore.go.

// AdminAuth is the AdminServer's command authentication settings.
type AdminAuth struct {
	// SnapshotEnabled (zookeeper.admin.snapshot.enabled, true): serve the snapshot
	// command; off, it answers 503.
	SnapshotEnabled bool
	// RestoreEnabled (zookeeper.admin.restore.enabled, true): serve the restore
	// command; off, it answers 503.
	RestoreEnabled bool
	// RateLimitInterval (zookeeper.admin.rateLimiterIntervalInMS, 5 minutes): at most
	// one snapshot, and one restore, in this time.
	RateLimitInterval time.Duration
	// UseXForwardedFor (zookeeper.IPAuthenticationProvider.usexforwardedfor, false):
	// the ip scheme names the first address of a request's X-Forwarded-For header
	// instead of the peer's, for an AdminServer behind a proxy (admin_auth.go).
	UseXForwardedFor bool
}

// DefaultAdminAuth is ZooKeeper 3.9's.
func DefaultAdminAuth() AdminAuth {
	return AdminAuth{SnapshotEnabled: true, RestoreEnabled: true, RateLimitInterval: 5 * time.Minute}
}

// adminLimiter is one command's rate limit, as each of ZooKeeper 3.9's snapshot and
// restore commands has a RateLimiter of its own: one call per interval.
type adminLimiter struct {
	mu   sync.Mutex
	last time.Time
}

// allow reports whether a call may run now, and if so counts it.
func (l *adminLimiter) allow(every time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && time.Since(l.last) < every {
		return false
	}
	l.last = time.Now()
	return true
}

func (s *Server) serveAdminSnapshot(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, errText any) {
		w.Header().Set("Content-Type", "application/json")
		body := jacksonJSON(map[string]any{"command": "snapshot", "error": errText}, false)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(status)
		w.Write(body)
	}
	if !s.serving() {
		// As every command that needs the server (3.9's Commands.runCommand): 200.
		answer(http.StatusOK, notServing)
		return
	}
	if status, why := s.adminAuthorize(r, jute.PermAll, "/"); status != http.StatusOK {
		answer(status, why)
		return
	}
	if !s.cfg.AdminAuth.SnapshotEnabled {
		answer(http.StatusServiceUnavailable, nil)
		return
	}
	if !s.adminSnap.allow(s.cfg.AdminAuth.RateLimitInterval) {
		answer(http.StatusTooManyRequests, nil)
		return
	}

	f, zxid, err := s.writeSnapshotFile()
	if err != nil {
		s.log.Warn("snapshot admin command failed", "err", err)
		answer(http.StatusInternalServerError, nil)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, _ := f.Seek(0, io.SeekEnd)
	w.Header().Set("last_zxid", fmt.Sprintf("0x%x", zxid))
	w.Header().Set("snapshot_size", strconv.FormatInt(size, 10))
	if v := r.URL.Query().Get("streaming"); v != "" && !strings.EqualFold(v, "true") {
		answer(http.StatusOK, nil)
		return
	}
	f.Seek(0, io.SeekStart)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(http.StatusOK)
	io.Copy(w, f)
}

// writeSnapshotFile writes the current state as a ZooKeeper snapshot to a temporary
// file (so its size is known before it is sent) and returns it with its zxid. The tree
// is read through a frozen view, a chunk of nodes at a time, so writes go on meanwhile
// and no copy of the tree is made.
func (s *Server) writeSnapshotFile() (*os.File, int64, error) {
	f, err := os.CreateTemp("", "zkraft-admin-snapshot-*")
	if err != nil {
		return nil, 0, err
	}
	var (
		z    *persistence.ZKFrozenWriter
		zxid int64
	)
	err = s.node.FSM.ReadFrozen(func(at int64, sessions []session.Session, fz *datatree.Frozen) error {
		zxid = at
		z, err = persistence.NewZKFrozenWriter(f, sessions, fz)
		return err
	}, func(*datatree.Frozen) (bool, error) { return z.Next(1024) })
	if err == nil {
		err = z.Close(zxid)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, err
	}
	return f, zxid, nil
}
