package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// At the default level the log has a line per event (start, expiry sweeps), never one per
// request or per session: 300 requests and 20 expiring sessions write a handful of lines.
func TestLogIsPerEventNotPerRequest(t *testing.T) {
	var buf lockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg := DefaultConfig()
	cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = 0, "127.0.0.1", t.TempDir()
	cfg.TickTime = 50 * time.Millisecond
	s, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	for i := 0; i < 100; i++ {
		p := fmt.Sprintf("/n%d", i)
		c.call(jute.OpCreate, &jute.CreateRequest{Path: p, Acl: openACL}, nil)
		c.call(jute.OpGetData, &jute.GetDataRequest{Path: p}, &jute.GetDataResponse{})
		c.call(jute.OpSetData, &jute.SetDataRequest{Path: p, Version: -1}, &jute.SetDataResponse{})
	}
	for i := 0; i < 20; i++ {
		connectTimeout(t, s.Addr().String(), 100).nc.Close() // sessions left to expire
	}
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(buf.String(), "sessions expired"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no expiry line:\n%s", buf.String())
		}
	}
	time.Sleep(300 * time.Millisecond)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) > 8 {
		t.Fatalf("%d log lines for 300 requests and 20 expiries:\n%s", len(lines), buf.String())
	}
	if !strings.Contains(buf.String(), "count=") {
		t.Fatalf("the expiry line has no count:\n%s", buf.String())
	}
}

// While one member of three is down, the survivors say so once (raft's per-attempt
// heartbeat and replication errors go to debug), and once more when it is back.
func TestClusterLogsUnreachableMemberOnce(t *testing.T) {
	bufs := make([]*lockedBuffer, 3)
	logs := make([]*slog.Logger, 3)
	for i := range logs {
		bufs[i] = &lockedBuffer{}
		logs[i] = slog.New(slog.NewTextHandler(bufs[i], &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	tc := newTestClusterLogged(t, 3, nil, nil, logs)
	down := tc.follower()
	peer := fmt.Sprintf("peer=%d ", down+1)
	survivors := func(what string) (n int, lines string) {
		for i, b := range bufs {
			if i == down {
				continue
			}
			for _, l := range strings.Split(b.String(), "\n") {
				if strings.Contains(l, what) {
					n++
					lines += l + "\n"
				}
			}
		}
		return n, lines
	}
	await := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if n, _ := survivors(what); n > 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q line in the survivors' logs", what)
			}
		}
	}

	tc.stop(down)
	await(`msg="raft peer unreachable" ` + peer)
	time.Sleep(3 * time.Second) // raft retries all along
	tc.start(down)
	await(`msg="raft peer reachable again" ` + peer)
	tc.converge()
	for _, c := range []struct {
		what string
		want int
	}{
		{`msg="raft peer unreachable" ` + peer, 1},
		{`msg="raft peer reachable again" ` + peer, 1},
		{`msg="raft peer still unreachable"`, 0},
		{"level=ERROR", 0},
	} {
		if n, lines := survivors(c.what); n != c.want {
			t.Errorf("%d lines with %s in the survivors' logs, want %d:\n%s", n, c.what, c.want, lines)
		}
	}
	if n, lines := survivors(`msg="raft peer reachable again" ` + peer); n == 1 && !strings.Contains(lines, "failed_attempts=") {
		t.Errorf("the line that ends the outage has no count: %s", lines)
	}
}
