package server

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// Freshness across members, as ZooKeeper users rely on it: once a write through one
// member has returned, a read through another member sees it. ZooKeeper promises that to
// the session that wrote (a session that moves carries its last zxid along) and to a
// session created after the write; between two live sessions it holds only in practice,
// because a follower applies a COMMIT as soon as it gets it. zkraft's members apply a
// commit one hop after the leader (commit notices), so the same patterns should be as
// fresh. Each case runs against a 3-member ZooKeeper 3.8 ensemble and a 3-process
// zkraft cluster, with the writer on the member that applies first (the leader) or on a
// follower, and the reader on a follower.

// The rounds of each case and pair of members. The party case has more, so that its
// stale count tells zkraft's lag from noise (see staleBound).
const (
	freshnessRounds = 100
	partyRounds     = 200
)

// freshnessResult is the JSON line testdata/kazoo_freshness.py ends with.
type freshnessResult struct {
	Case     string
	Rounds   int
	Stale    int
	Failures []string
	Seconds  float64
}

func runFreshness(t *testing.T, kase, hostsA, hostsB string, rounds int) freshnessResult {
	t.Helper()
	out := run(t, 3*time.Minute, systemPy, "testdata/kazoo_freshness.py", kase, hostsA, hostsB, fmt.Sprint(rounds))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r freshnessResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil || r.Case != kase || r.Rounds != rounds {
		t.Fatalf("kazoo_freshness.py %s: %v\n%s", kase, err, out)
	}
	if len(lines) > 1 {
		t.Logf("kazoo_freshness.py %s:\n%s", kase, strings.Join(lines[:len(lines)-1], "\n"))
	}
	return r
}

// memberPair is a writer's member and a reader's.
type memberPair struct{ name, writer, reader string }

// freshnessPairs are the leader to a follower, which learns of the commit one hop
// after the leader applied it and may not have the entry on disk yet (a commit needs
// only one follower's ack), and a follower to the other follower.
func freshnessPairs(t *testing.T, c *ztest.Cluster) []memberPair {
	t.Helper()
	l := c.Leader()
	if l < 0 {
		t.Fatal("no leader")
	}
	var followers []string
	for i, m := range c.Members {
		if i != l {
			followers = append(followers, m.Addr)
		}
	}
	return []memberPair{
		{"leader to follower", c.Members[l].Addr, followers[0]},
		{"follower to follower", followers[0], followers[1]},
	}
}

// moveSession creates path through member from, then reattaches the session through
// member to with the zxid of that write, and reports whether to refused it. A member
// may refuse by closing the connection (ZooKeeper closes that of a client that has seen a
// zxid it has not applied yet) or by answering that the session expired; if it took the
// session, it must have the node. For ZooKeeper (lenient), a connection closed at any
// step counts as a refusal and is logged: a `make test` run once saw EOF on ZooKeeper's
// side at a step the old helper did not name. For zkraft every step but the second
// handshake must succeed.
func moveSession(t *testing.T, from, to, path string, lenient bool) (refused bool) {
	t.Helper()
	closed := func(step string, err error) bool {
		t.Helper()
		if !lenient {
			t.Fatalf("%s: %s: %v", path, step, err)
		}
		t.Logf("%s: the member closed the connection at %s: %v", path, step, err)
		return true
	}
	c := dial(t, from)
	if c.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}, HasReadOnly: true}) == nil {
		return closed("the first handshake", io.EOF)
	}
	var created jute.Create2Response
	h, err := c.exchange(jute.OpCreate2, &jute.CreateRequest{Path: path, Acl: openACL}, &created)
	if err != nil {
		return closed("the create", err)
	}
	if h.Err != 0 {
		t.Fatalf("create %s: %d", path, h.Err)
	}
	c.nc.Close()
	m := dial(t, to)
	resp := m.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, LastZxidSeen: h.Zxid, SessionId: c.sid, Passwd: c.pw}})
	if resp == nil {
		return true
	}
	if resp.SessionId == 0 {
		// The member answered that the session is gone: ZooKeeper 3.8 now and then does
		// (a refusal like the others; zkraft must never refuse).
		t.Logf("%s: the member answered that session %x expired", path, c.sid)
		return true
	}
	if resp.SessionId != c.sid {
		t.Fatalf("%s: session %x, want %x", path, resp.SessionId, c.sid)
	}
	h, err = m.exchange(jute.OpExists, &jute.ExistsRequest{Path: path}, &jute.ExistsResponse{})
	if err != nil {
		return closed("the exists after the move", err)
	}
	if h.Err != 0 {
		t.Fatalf("%s: the member took the session without the write it had seen (exists: %d)", path, h.Err)
	}
	if _, err := m.exchange(jute.OpCloseSession, nil, nil); err != nil && !lenient {
		t.Fatalf("%s: closeSession: %v", path, err)
	}
	m.nc.Close()
	return false
}

// TestFreshnessAcrossMembers runs three patterns on ZooKeeper and then on zkraft:
//   - kazoo's Party: B lists the party right after A's join or leave returned. Neither
//     server promises this and ZooKeeper's lists are stale now and then, so zkraft's
//     stale count is held to staleBound, which ZooKeeper's count raises; a count above
//     it is measured again, both servers back to back, before the test fails.
//   - a new kazoo client chrooted to a node another client just created, on another
//     member: never fails on either.
//   - a raw client that moves its session to another member with the zxid of its last
//     write: zkraft takes it every time (the member waits until it has applied that
//     zxid); ZooKeeper refuses it now and then (closes the connection, or answers that
//     the session expired), which is logged, not failed.
func TestFreshnessAcrossMembers(t *testing.T) {
	requireClient(t, "kazoo and ZooKeeper 3.8", ztest.Available() == nil)
	stale := map[string]int{}
	for _, sys := range freshnessSystems {
		t.Run(sys.name, func(t *testing.T) {
			c, err := sys.start(3, ztest.Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			pairs := freshnessPairs(t, c)
			t.Run("party", func(t *testing.T) {
				stale[sys.name] = partyStale(t, sys.name, pairs)
			})
			t.Run("chroot", func(t *testing.T) {
				p := pairs[0]
				r := runFreshness(t, "chroot", p.writer, p.reader, freshnessRounds)
				t.Logf("%s, %s: %d rounds in %.1fs", sys.name, p.name, r.Rounds, r.Seconds)
				if len(r.Failures) > 0 {
					t.Errorf("%s, %s: %d of %d rounds failed", sys.name, p.name, len(r.Failures), r.Rounds)
				}
			})
			t.Run("session move", func(t *testing.T) {
				for k, p := range pairs {
					start, refused := time.Now(), 0
					for i := 0; i < freshnessRounds; i++ {
						if moveSession(t, p.writer, p.reader, fmt.Sprintf("/moved-%d-%d", k, i), sys.name == "zookeeper") {
							refused++
						}
					}
					t.Logf("%s, %s: session moves refused: %d of %d, in %.1fs", sys.name, p.name, refused, freshnessRounds,
						time.Since(start).Seconds())
					if sys.name == "zkraft" && refused > 0 {
						t.Errorf("%s: %d of %d session moves refused", p.name, refused, freshnessRounds)
					}
				}
			})
		})
	}
	got, ok := stale["zkraft"]
	if !ok {
		return
	}
	zk, ran := stale["zookeeper"]
	bound := staleBound(zk, ran)
	if got <= bound {
		return
	}
	// The two measurements ran minutes apart on a machine the rest of the suite loads
	// unevenly, and one can cross the bound by chance: both are measured again, back to
	// back on fresh clusters, and the test fails only if zkraft crosses the bound of the
	// second measurement too. A systematic lag crosses both.
	t.Logf("zkraft's party lists were stale %d times, more than %d (ZooKeeper's: %d): measuring both again", got, bound, zk)
	again := map[string]int{}
	for _, sys := range freshnessSystems {
		func() {
			c, err := sys.start(3, ztest.Options{Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Stop()
			again[sys.name] = partyStale(t, sys.name, freshnessPairs(t, c))
		}()
	}
	if bound := staleBound(again["zookeeper"], true); again["zkraft"] > bound {
		t.Errorf("zkraft's party lists were stale %d and then %d times, more than %d and %d (ZooKeeper's: %d and %d)",
			got, again["zkraft"], staleBound(zk, ran), bound, zk, again["zookeeper"])
	}
}

// freshnessSystems are the clusters TestFreshnessAcrossMembers compares, ZooKeeper first.
var freshnessSystems = []struct {
	name  string
	start func(int, ztest.Options) (*ztest.Cluster, error)
}{{"zookeeper", ztest.StartZooKeeperEnsemble}, {"zkraft", ztest.StartZkraftCluster}}

// partyStale runs the party case over pairs and returns how many of its lists were stale.
func partyStale(t *testing.T, system string, pairs []memberPair) int {
	t.Helper()
	n := 0
	for _, p := range pairs {
		r := runFreshness(t, "party", p.writer, p.reader, partyRounds)
		t.Logf("%s, %s: stale lists: %d of %d, in %.1fs", system, p.name, r.Stale, 2*r.Rounds, r.Seconds)
		n += r.Stale
	}
	return n
}

// staleBound is how many of zkraft's 800 party lists may be stale: twice ZooKeeper's
// count in the same run, and never less than 3 %. It catches a systematic lag, not a
// small difference. On a loaded 2-core machine ZooKeeper's lists were stale about 0.2 %
// (leader to follower) and 0.6 % (follower to follower) of the time, and zkraft's about
// 0.9 % and 0.7 %, when its commit notice still left the leader after the leader applied
// the entry (it leaves before now, as ZooKeeper's COMMIT does). A zkraft member that
// applied a noticed commit only once its own fsync returned showed about 7 % and 3.5 %
// (37 of 800).
func staleBound(zookeeper int, ran bool) int {
	floor := 3 * 2 * 2 * partyRounds / 100
	if ran && 2*zookeeper > floor {
		return 2 * zookeeper
	}
	return floor
}
