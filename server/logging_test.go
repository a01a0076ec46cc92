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
// heartbeat and replication errors go to debug), and once more when it is back. Only the
// leader sends to it, so should leadership move meanwhile (the test cannot rule that out
// on a loaded machine) the new leader says it too, and the old one's last word stands
// until it leads again: each survivor's lines must alternate, unreachable then
// reachable again, and one left unreachable must have stopped leading.
func TestClusterLogsUnreachableMemberOnce(t *testing.T) {
	bufs := make([]*lockedBuffer, 3)
	logs := make([]*slog.Logger, 3)
	for i := range logs {
		bufs[i] = &lockedBuffer{}
		logs[i] = slog.New(slog.NewTextHandler(bufs[i], &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	// ZooKeeper's tick: Raft's timeouts of a real deployment, not the harness's short ones.
	tc := newTestClusterLogged(t, 3, func(c *Config) { c.TickTime = 2 * time.Second }, nil, logs)
	down := tc.follower()
	unreachable := fmt.Sprintf(`msg="raft peer unreachable" peer=%d `, down+1)
	reachable := fmt.Sprintf(`msg="raft peer reachable again" peer=%d `, down+1)
	from := make([]int, len(bufs))
	dump := func() {
		for i, b := range bufs {
			t.Logf("member %d's log:\n%s", i+1, b.String())
		}
	}
	// lines returns what survivor i logged since the member was stopped.
	lines := func(i int) []string { return strings.Split(bufs[i].String()[from[i]:], "\n") }
	await := func(what string) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			for i := range bufs {
				if i != down && strings.Contains(strings.Join(lines(i), "\n"), what) {
					return
				}
			}
			if time.Now().After(deadline) {
				dump()
				t.Fatalf("no %q line in the survivors' logs", what)
			}
		}
	}

	for i, b := range bufs {
		from[i] = len(b.String())
	}
	tc.stop(down)
	await(unreachable)
	time.Sleep(3 * time.Second) // raft retries all along
	tc.start(down)
	await(reachable)
	tc.converge()
	downs, ups, leaderChanged := 0, 0, false
	for i := range bufs {
		if i == down {
			continue
		}
		isDown, stoppedLeading := false, false
		for _, l := range lines(i) {
			switch {
			case strings.Contains(l, unreachable):
				if isDown {
					t.Errorf("member %d: a second unreachable line: %s", i+1, l)
				}
				isDown, stoppedLeading = true, false
				downs++
			case strings.Contains(l, reachable):
				if !isDown {
					t.Errorf("member %d: reachable again without unreachable: %s", i+1, l)
				}
				isDown = false
				ups++
				if !strings.Contains(l, "failed_attempts=") {
					t.Errorf("member %d: the line that ends the outage has no count: %s", i+1, l)
				}
			case strings.Contains(l, `msg="no longer leading"`):
				stoppedLeading, leaderChanged = true, true
			case strings.Contains(l, "msg=leading"):
				leaderChanged = true
			case strings.Contains(l, "level=ERROR") || strings.Contains(l, "still unreachable"):
				t.Errorf("member %d: %s", i+1, l)
			}
		}
		if isDown && !stoppedLeading {
			t.Errorf("member %d leads and still calls member %d unreachable", i+1, down+1)
		}
	}
	if ups != 1 || downs < 1 || downs > 1 && !leaderChanged {
		t.Errorf("%d unreachable and %d reachable-again lines for member %d (leadership changed: %v), want 1 and 1",
			downs, ups, down+1, leaderChanged)
	}
	if t.Failed() {
		dump()
	}
}
