package quorum

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// One line when a peer becomes unreachable, a count at most once per interval while it
// stays so, one line when it is back; the clock is the test's.
func TestReachabilityLines(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	r := newReachability(slog.New(slog.NewTextHandler(&buf, nil)), func() time.Time { return now }, time.Minute)
	refused := errors.New("connection refused")
	r.answered("2") // never down: nothing to say
	// 150 s of failures, two a second.
	for i := 0; i < 300; i++ {
		r.failed("2", refused)
		now = now.Add(500 * time.Millisecond)
	}
	r.answered("2")
	r.answered("2") // a second answer says nothing
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
	r.failed("2", refused) // a new outage
	if !strings.HasSuffix(buf.String(), "msg=\"raft peer unreachable\" peer=2 error=\"connection refused\"\n") {
		t.Errorf("second outage not reported:\n%s", buf.String())
	}
}

// downFor is how long a peer has been failing, 0 once it answers or after a reset (a
// server that leads again judges peers afresh).
func TestReachabilityDownFor(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newReachability(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), func() time.Time { return now }, time.Minute)
	if d := r.downFor("2"); d != 0 {
		t.Fatalf("never tried: %v", d)
	}
	r.failed("2", errors.New("refused"))
	now = now.Add(3 * time.Second)
	r.failed("2", errors.New("refused"))
	if d := r.downFor("2"); d != 3*time.Second {
		t.Fatalf("down for %v, want 3s", d)
	}
	r.answered("2")
	if d := r.downFor("2"); d != 0 {
		t.Fatalf("answered, down for %v", d)
	}
	r.failed("3", errors.New("refused"))
	now = now.Add(time.Second)
	r.reset()
	if d := r.downFor("3"); d != 0 || r.nDown.Load() != 0 {
		t.Fatalf("after reset: down for %v, %d down", d, r.nDown.Load())
	}
}
