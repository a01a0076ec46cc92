package quorum

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
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

// outageSince spans a peer's failures from the first to the latest, and the unbroken run
// of refusals that ends them; an answer ends both, and what came before from does not
// count.
func TestReachabilityOutageSince(t *testing.T) {
	now := time.Unix(1000, 0)
	r := newReachability(slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)), func() time.Time { return now }, time.Minute)
	refused := &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	check := func(what string, from time.Time, down, ref time.Duration) {
		t.Helper()
		if d, rf := r.outageSince("2", from); d != down || rf != ref {
			t.Fatalf("%s: down %v refused %v, want %v %v", what, d, rf, down, ref)
		}
	}
	check("never tried", time.Time{}, 0, 0)
	r.failed("2", errors.New("i/o timeout"))
	now = now.Add(3 * time.Second)
	r.failed("2", refused)
	now = now.Add(2 * time.Second)
	r.failed("2", refused)
	check("a timeout, then refusals", time.Time{}, 5*time.Second, 2*time.Second)
	now = now.Add(time.Hour) // not tried again since: the wait is not counted
	check("a wait after the last failure", time.Time{}, 5*time.Second, 2*time.Second)
	check("from after the first refusal", time.Unix(1004, 0), time.Second, time.Second)
	r.failed("2", errors.New("i/o timeout"))
	check("a timeout ends the refusals", time.Time{}, time.Hour+5*time.Second, 0)
	r.answered("2")
	check("answered", time.Time{}, 0, 0)
}
