package quorum

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Raft's per-attempt RPC failures go to debug; its other errors stay errors.
func TestRaftLogLevels(t *testing.T) {
	var buf bytes.Buffer
	h := newRaftLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	h.Error("failed to heartbeat to", "peer", "127.0.0.1:1", "backoff time", time.Millisecond, "error", errors.New("connection refused"))
	h.Error("failed to appendEntries to", "peer", raft.Server{ID: "2"}, "error", errors.New("connection refused"))
	h.Warn("failed to contact", "server-id", "2", "time", time.Second)
	h.Error("failed to take snapshot", "error", errors.New("disk full"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "disk full") {
		t.Fatalf("at info level, want only the snapshot error:\n%s", buf.String())
	}
}
