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
