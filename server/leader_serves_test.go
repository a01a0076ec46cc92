package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// With leaderServes=no the leader's client port serves nobody: handshakes are refused,
// four-letter words answer as a member that does not serve (ruok still imok, isro null),
// while its AdminServer's commands still serve. A follower that becomes leader drops its
// clients, which carry on through the other members, and takes no new ones; the old
// leader, now a follower, takes clients.
func TestLeaderServesNo(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) { c.LeaderServesNo = true })
	l := tc.leader()
	if !tc.servers[l].leaderRefusesClients() {
		t.Fatal("the leader takes clients")
	}
	refuses := func(i int, what string) {
		t.Helper()
		for cmd, want := range map[string]string{"srvr": notServing + "\n", "mntr": notServing + "\n", "isro": "null", "ruok": "imok"} {
			if got := askFourLetter(t, tc.addr(i), cmd); got != want {
				t.Fatalf("%s: %s answered %q, want %q", what, cmd, got, want)
			}
		}
		if c := trySession(t, tc.addr(i), 0, nil); c != nil {
			t.Fatalf("%s: a session was answered", what)
		}
		if tc.servers[i].notReady() == "" {
			t.Fatalf("%s: /ready says ready", what)
		}
		if got := tc.servers[i].adminStats(false)["server_stats"].(map[string]any)["server_state"]; got != "leader" {
			t.Fatalf("%s: the AdminServer's stats say %v, want leader (its AdminServer still serves)", what, got)
		}
	}
	refuses(l, "the leader")

	var followers, addrs []string
	for i := range tc.servers {
		if i != l {
			followers = append(followers, tc.addr(i))
			tc.awaitSrvr(i, "Mode: follower") // it may not have synced with the leader yet
			if got := askFourLetter(t, tc.addr(i), "isro"); got != "rw" {
				t.Fatalf("follower %d: isro %q", i+1, got)
			}
		}
		addrs = append(addrs, tc.addr(i))
	}
	// A raw session on each follower, whichever becomes leader; and two that know every
	// member, as clients do (go-zookeeper picks among them at random).
	for _, f := range followers {
		if trySession(t, f, 0, nil) == nil {
			t.Fatalf("follower %s refused a session", f)
		}
	}
	var sessions []*zk.Conn
	for range 2 {
		sessions = append(sessions, zkSession(t, 10*time.Second, addrs...))
	}
	if _, err := sessions[0].Create("/a", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	// raft's transfer may time out on a loaded machine: tried again while l still leads.
	for try := 0; tc.servers[l].node.IsLeader(); try++ {
		if err := tc.servers[l].node.HandOver(5 * time.Second); err != nil && try == 4 {
			t.Fatal(err)
		}
	}
	next := -1
	for deadline := time.Now().Add(10 * time.Second); next < 0 || !tc.servers[next].node.Established(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no new leader established")
		}
		for i, s := range tc.servers {
			if i != l && s.node.IsLeader() {
				next = i
			}
		}
	}
	for deadline := time.Now().Add(10 * time.Second); tc.servers[next].stats.closed[closedLeaderServesNo].Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the new leader kept its clients")
		}
	}
	refuses(next, "the new leader")
	if n := len(tc.servers[next].connList()); n != 0 {
		t.Fatalf("the new leader holds %d connections", n)
	}
	if got := askFourLetter(t, tc.addr(l), "srvr"); !strings.Contains(got, "Mode: follower") {
		t.Fatalf("the old leader's srvr: %q", got)
	}
	// The sessions live on, moved if they were on the new leader.
	for i, c := range sessions {
		var data []byte
		err := retryLoss(t, func() (err error) { data, _, err = c.Get("/a"); return err })
		if err != nil || string(data) != "1" {
			t.Fatalf("session %d after the election: %q %v", i, data, err)
		}
	}
	if c := trySession(t, tc.addr(l), 0, nil); c == nil {
		t.Fatal("the old leader, now a follower, refused a session")
	}
}

// leaderServesSteps are what a client sees of an ensemble with leaderServes=no: the
// leader's four-letter words and handshake, and a follower's session.
func leaderServesSteps(t *testing.T, c *ztest.Cluster) []string {
	leader := -1
	for i, m := range c.Members {
		if out, _ := ztest.FourLetter(m.Addr, "srvr"); strings.Contains(out, notServing) {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatalf("%s: no member refuses clients", c.Name)
	}
	var lines []string
	for _, cmd := range []string{"ruok", "srvr", "stat", "mntr", "cons", "isro", "wchs", "dump", "conf"} {
		out, err := ztest.FourLetter(c.Members[leader].Addr, cmd)
		lines = append(lines, fmt.Sprintf("leader %s: %q %v", cmd, out, err))
	}
	lines = append(lines, fmt.Sprintf("leader session answered: %v", trySession(t, c.Members[leader].Addr, 0, nil) != nil))
	follower := (leader + 1) % len(c.Members)
	s := trySession(t, c.Members[follower].Addr, 0, nil)
	lines = append(lines, fmt.Sprintf("follower session answered: %v", s != nil))
	if s != nil {
		lines = append(lines, "follower create: "+ended(s.exchange(jute.OpCreate, &jute.CreateRequest{Path: "/ls", Acl: openACL}, nil)))
	}
	return lines
}

func TestLeaderServesNoMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	opts := ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"leaderServes": "no", "4lw.commands.whitelist": "*"}}
	var want []string
	for _, start := range []func(int, ztest.Options) (*ztest.Cluster, error){ztest.StartZooKeeperEnsemble, ztest.StartZkraftCluster} {
		c, err := start(3, opts)
		if err != nil {
			t.Fatal(err)
		}
		got := leaderServesSteps(t, c)
		c.Stop()
		if want == nil {
			want = got
			t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
			continue
		}
		compareLines(t, want, got)
	}
}
