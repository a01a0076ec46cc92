package server

import (
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/jute"
)

// A restarted member's first session reads every write acknowledged while the member
// was down, and so does a session that comes back to a member that was cut off, long
// enough to lose its leader or not: a ZooKeeper follower revalidates a session with its
// leader before it serves it. (A zkraft member knows its leader from the first
// heartbeat, before raft brings it the log it lacks.)
func TestRejoinedMemberServesItsLeadersState(t *testing.T) {
	// ZooKeeper's default tick: a 500 ms heartbeat timeout, so the member keeps its
	// leader through the short cut below.
	tc := newTestClusterWith(t, 3, func(c *Config) { c.TickTime = 2 * time.Second })
	l, f := tc.leader(), tc.follower()
	w := zkSession(t, 10*time.Second, tc.addr(l))
	if _, err := w.Create("/k", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) {
		t.Helper()
		for i := from; i <= to; i++ {
			if _, err := w.Set("/k", []byte(strconv.Itoa(i)), -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	firstRead := func(what string, want int) {
		t.Helper()
		r := zkSession(t, 10*time.Second, tc.addr(f))
		data, _, err := r.Get("/k")
		if err != nil || string(data) != strconv.Itoa(want) {
			t.Fatalf("the first session on the %s member read %q (%v), the last acknowledged write is %d", what, data, err, want)
		}
		r.Close()
	}

	tc.stop(f)
	write(1, 300)
	tc.start(f)
	firstRead("restarted", 300)

	// A session of the member's own comes back to it as soon as the cut heals (it has
	// seen no newer zxid than the member, and does not move), and must read what the
	// others wrote meanwhile.
	own := dial(t, tc.addr(f))
	own.connect(0, nil)
	sid, pw := own.sid, own.pw
	own.nc.Close()
	tc.net.Isolate(strconv.Itoa(f + 1))
	deadline := time.Now().Add(15 * time.Second)
	for tc.servers[f].node.HasLeader() {
		if time.Now().After(deadline) {
			t.Fatal("the cut-off member still knows a leader after 15s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	write(301, 600)
	tc.net.Heal()
	back := reattach(t, tc.addr(f), sid, pw)
	var resp jute.GetDataResponse
	if h := back.call(jute.OpGetData, &jute.GetDataRequest{Path: "/k"}, &resp); h.Err != 0 || string(resp.Data) != "600" {
		t.Fatalf("a session back on the healed member read %q (%v), the last acknowledged write is 600", resp.Data, h.Err)
	}
	firstRead("healed", 600)

	// A cut too short for the member to lose its leader (paused, say): a session
	// reattached at once must read what the others wrote meanwhile. The cut lasts 300 ms,
	// longer than half the heartbeat timeout (500 ms here) and shorter than the timeout,
	// less the up to 200 ms since the leader's last heartbeat: a narrow window, which a
	// loaded machine (the writes during the cut slowed) can miss, the member then calling
	// an election. Such a round is not this phase's case, and is run again, at most
	// shortCutRounds times.
	const shortCutRounds = 5
	last := 600
	for round := 1; ; round++ {
		leaderBefore, _ := tc.servers[f].node.LeaderID()
		tc.net.Isolate(strconv.Itoa(f + 1))
		cut := time.Now()
		write(last+1, last+10)
		last += 10
		time.Sleep(300*time.Millisecond - time.Since(cut))
		leaderAfter, ok := tc.servers[f].node.LeaderID()
		tc.net.Heal()
		if ok && leaderAfter == leaderBefore {
			break
		}
		if round == shortCutRounds {
			t.Fatalf("the member's leader changed from %q to %q during a 300 ms cut, in each of %d rounds", leaderBefore, leaderAfter, round)
		}
		t.Logf("round %d: the member's leader changed from %q to %q during the cut (%v); again", round, leaderBefore, leaderAfter, time.Since(cut))
		for deadline := time.Now().Add(15 * time.Second); !tc.servers[f].node.HasLeader(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the healed member knows no leader after 15s")
			}
		}
	}
	back = reattach(t, tc.addr(f), sid, pw)
	if h := back.call(jute.OpGetData, &jute.GetDataRequest{Path: "/k"}, &resp); h.Err != 0 || string(resp.Data) != strconv.Itoa(last) {
		t.Fatalf("a session back on a member cut off for 300 ms read %q (%v), the last acknowledged write is %d", resp.Data, h.Err, last)
	}
}

// reattach connects to addr with session sid, retrying every few milliseconds while
// the member refuses (it knows no leader yet), for at most 15s.
func reattach(t *testing.T, addr string, sid int64, pw []byte) *rawClient {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		c := dial(t, addr)
		req := jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 30000, SessionId: sid, Passwd: pw}}
		if resp := c.tryConnect(req); resp != nil {
			if resp.SessionId != sid {
				t.Fatalf("reattaching 0x%x: answered session 0x%x", sid, resp.SessionId)
			}
			return c
		}
		c.nc.Close()
		if time.Now().After(deadline) {
			t.Fatalf("session 0x%x not reattached on %s within 15s", sid, addr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
