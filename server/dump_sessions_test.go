package server

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zkraft/zkraft/server/ztest"
)

// monotonicMillis reads the clock ZooKeeper's session deadlines are on (System.nanoTime:
// CLOCK_MONOTONIC on Linux), in milliseconds.
func monotonicMillis(t *testing.T) int64 {
	t.Helper()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		t.Fatal(err)
	}
	return ts.Nano() / int64(time.Millisecond)
}

// trackerSection is the SessionTracker part of a dump.
func trackerSection(t *testing.T, dump string) string {
	t.Helper()
	i, j := strings.Index(dump, "SessionTracker dump:\n"), strings.Index(dump, "ephemeral nodes dump:\n")
	if i < 0 || j < i {
		t.Fatalf("dump without its sections: %q", dump)
	}
	return dump[i+len("SessionTracker dump:\n") : j]
}

// adminExpiryMap is the AdminServer dump's expiry_time_to_session_ids.
func adminExpiryMap(t *testing.T, body []byte) map[string][]int64 {
	t.Helper()
	var out struct {
		Expiry map[string][]int64 `json:"expiry_time_to_session_ids"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Expiry == nil {
		t.Fatalf("dump: %v %s", err, body)
	}
	return out.Expiry
}

// A standalone server's dump shows its session tracker as ZooKeeper's SessionTrackerImpl
// does: the four-letter word lists the deadline buckets ("1 expire at <Java date>:" and
// the session's id), the AdminServer keys the session ids by the bucket's time on the
// monotonic clock. Both servers are asked the same; their deadlines must lie a session
// timeout (10 s, the client's ask) after the session was last heard from, rounded up to
// the next tick, on the wall clock and the monotonic clock alike.
func TestDumpSessionsMatchZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	shape := regexp.MustCompile(`^Session Sets \(1\)/\(1\):\n1 expire at ([A-Z][a-z]{2} [A-Z][a-z]{2} \d{2} \d{2}:\d{2}:\d{2} \S+ \d{4}):\n\t0x([0-9a-f]+)\n$`)
	const timeout, tick = 10 * time.Second, 2 * time.Second
	for _, start := range []func(ztest.Options) (*ztest.Server, error){ztest.StartZooKeeper, ztest.StartZkraft} {
		port, err := ztest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		s, err := start(ztest.Options{Logf: t.Logf, ExtraConfig: adminConfig(port, "tickTime", "2000")})
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer s.Stop()
			wall, mono := time.Now(), monotonicMillis(t)
			c := migConnect(t, s.Addr, timeout)
			defer c.Close()
			sid := c.SessionID()
			text, err := ztest.FourLetter(s.Addr, "dump")
			if err != nil {
				t.Fatal(err)
			}
			_, _, body := adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/dump", port), "")
			wallEnd, monoEnd := time.Now(), monotonicMillis(t)

			m := shape.FindStringSubmatch(trackerSection(t, text))
			if m == nil || m[2] != strconv.FormatUint(uint64(sid), 16) {
				t.Fatalf("%s: session tracker dump %q, want one bucket holding 0x%x", s.Name, trackerSection(t, text), sid)
			}
			at, err := time.ParseInLocation(javaDateLayout, m[1], time.Local)
			if err != nil {
				t.Fatalf("%s: date %q: %v", s.Name, m[1], err)
			}
			// Java's date has whole seconds: a second of slack below.
			if lo, hi := wall.Add(timeout-time.Second), wallEnd.Add(timeout+tick); at.Before(lo) || at.After(hi) {
				t.Errorf("%s: bucket at %v, want within [%v, %v]", s.Name, at, lo, hi)
			}

			byExpiry := adminExpiryMap(t, body)
			if len(byExpiry) != 1 {
				t.Fatalf("%s: admin dump %s, want one bucket", s.Name, body)
			}
			for k, ids := range byExpiry {
				ms, err := strconv.ParseInt(k, 10, 64)
				if err != nil || len(ids) != 1 || ids[0] != sid {
					t.Fatalf("%s: admin dump %s, want the bucket of %d", s.Name, body, sid)
				}
				if lo, hi := mono+timeout.Milliseconds(), monoEnd+(timeout+tick).Milliseconds(); ms < lo || ms > hi {
					t.Errorf("%s: bucket at %d ms (monotonic), want within [%d, %d]", s.Name, ms, lo, hi)
				}
			}
		}()
	}
}

// A follower keeps no session deadlines: its dump lists the sessions it knows with their
// timeouts, as ZooKeeper's LearnerSessionTracker does, and its AdminServer dump keys none
// by expiry; the leader lists them by deadline bucket.
func TestDumpSessionsOnFollowerAndLeader(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.AdminEnabled, c.AdminHost, c.AdminPort = true, "127.0.0.1", mustFreePort(t)
	})
	l, f := tc.leader(), tc.follower()
	c := migConnect(t, tc.addr(f), 10*time.Second)
	defer c.Close()
	tc.converge()
	sid := c.SessionID()

	follower := trackerSection(t, askFourLetter(t, tc.addr(f), "dump"))
	// The client asks 10 s; the server grants at most 20 ticks.
	granted := min(10000, 20*tc.cfgs[f].TickTime.Milliseconds())
	if want := fmt.Sprintf("Global Sessions(1):\n0x%x\t%dms\n", sid, granted); follower != want {
		t.Errorf("follower's dump %q, want %q", follower, want)
	}
	_, _, body := adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/dump", tc.cfgs[f].AdminPort), "")
	if m := adminExpiryMap(t, body); len(m) != 0 {
		t.Errorf("follower's admin dump keys sessions by expiry: %s", body)
	}

	leader := trackerSection(t, askFourLetter(t, tc.addr(l), "dump"))
	if !strings.HasPrefix(leader, "Session Sets (1)/(1):\n1 expire at ") || !strings.HasSuffix(leader, fmt.Sprintf(":\n\t0x%x\n", sid)) {
		t.Errorf("leader's dump %q", leader)
	}
	_, _, body = adminGet(t, fmt.Sprintf("http://127.0.0.1:%d/commands/dump", tc.cfgs[l].AdminPort), "")
	if m := adminExpiryMap(t, body); len(m) != 1 {
		t.Errorf("leader's admin dump: %s", body)
	}
}
