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
	_, h := newRaftLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	h.Error("failed to heartbeat to", "peer", "127.0.0.1:1", "backoff time", time.Millisecond, "error", errors.New("connection refused"))
	h.Error("failed to appendEntries to", "peer", raft.Server{ID: "2"}, "error", errors.New("connection refused"))
	h.Warn("failed to contact", "server-id", "2", "time", time.Second)
	h.Error("failed to take snapshot", "error", errors.New("disk full"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=ERROR") || !strings.Contains(lines[0], "disk full") {
		t.Fatalf("at info level, want only the snapshot error:\n%s", buf.String())
	}
}

// One line when a peer becomes unreachable, a count at most once per interval while it
// stays so, one line when it is back; the clock is the test's.
func TestReachabilityLines(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	r := newReachability(slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return now }, time.Minute,
		func(raft.ServerID) string { return "connection refused" })
	for i := 0; i < 300; i++ { // 150 s of failures, two a second
		r.failed("2")
		now = now.Add(500 * time.Millisecond)
	}
	r.resumed("2")
	r.resumed("2") // a second resume says nothing
	got := buf.String()
	for _, want := range []struct {
		line  string
		count int
	}{
		{`msg="raft peer unreachable" peer=2 error="connection refused"`, 1},
		{`msg="raft peer still unreachable" peer=2`, 2},
		{`failed_attempts=121 down_for=1m0s`, 1},
		{`failed_attempts=241 down_for=2m0s`, 1},
		{`msg="raft peer reachable again" peer=2 failed_attempts=300 down_for=2m30s`, 1},
	} {
		if n := strings.Count(got, want.line); n != want.count {
			t.Errorf("%d lines with %s, want %d", n, want.line, want.count)
		}
	}
	if n := strings.Count(got, "\n"); n != 4 {
		t.Errorf("%d lines, want 4:\n%s", n, got)
	}
	r.failed("2") // a new outage
	if !strings.HasSuffix(buf.String(), "msg=\"raft peer unreachable\" peer=2 error=\"connection refused\"\n") {
		t.Errorf("second outage not reported:\n%s", buf.String())
	}
}
