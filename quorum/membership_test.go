package quorum

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// The text a 3-server ZooKeeper 3.8 ensemble shows in /zookeeper/config, and the one
// after `reconfig -add server.4=127.0.0.1:2394:2494;22904` and an observer line with a
// client address (taken from a real 3.8.0 ensemble).
const zkConfig = "server.1=127.0.0.1:2391:2491:participant\n" +
	"server.2=127.0.0.1:2392:2492:participant\n" +
	"server.3=127.0.0.1:2393:2493:observer;127.0.0.1:22903\n" +
	"version=200000003"

func TestMembershipRoundTrip(t *testing.T) {
	m, err := ParseMembership(zkConfig)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 0x200000003 || len(m.Peers) != 3 || !m.Peers[2].Observer || m.Voters() != 2 {
		t.Fatalf("parsed %+v", m)
	}
	if p, _ := m.Peer("3"); p.PeerAddr != "127.0.0.1:2393" || p.RaftAddr != "127.0.0.1:2493" || p.ClientAddr != "127.0.0.1:22903" {
		t.Fatalf("server.3 %+v", p)
	}
	if got := m.String(); got != zkConfig {
		t.Fatalf("String\n%s\nwant\n%s", got, zkConfig)
	}
}

func TestReconfigure(t *testing.T) {
	m, _ := ParseMembership(zkConfig)
	add, err := m.reconfigure("server.4=127.0.0.1:2394:2494;22904", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := add.Peer("4"); !ok || p.ClientAddr != "0.0.0.0:22904" || p.Observer {
		t.Fatalf("joined %+v", add)
	}
	if !strings.Contains(add.String(), "server.4=127.0.0.1:2394:2494:participant;0.0.0.0:22904\n") {
		t.Fatalf("text %s", add.String())
	}
	// Leaving an unknown id is no error (ZooKeeper commits the same configuration).
	if same, err := m.reconfigure("", "7", ""); err != nil || len(same.Peers) != 3 {
		t.Fatalf("remove 7: %v %+v", err, same)
	}
	rm, err := add.reconfigure("", "1", "")
	if err != nil || len(rm.Peers) != 3 || rm.Peers[0].ID != "2" {
		t.Fatalf("remove 1: %v %+v", err, rm)
	}
	members, err := m.reconfigure("", "", "server.1=127.0.0.1:1:2;2181,server.5=127.0.0.1:3:4;2185")
	if err != nil || len(members.Peers) != 2 || members.Peers[1].ID != "5" {
		t.Fatalf("members: %v %+v", err, members)
	}
	for _, bad := range [][3]string{
		{"", "", "server.1=127.0.0.1:2391:2491;127.0.0.1:22901"}, // one voter left
		{"", "2", ""},                            // one voter left (3 observes)
		{"server.4=127.0.0.1:2394:2494", "", ""}, // no client port
		{"server.4", "", ""},                     // not server.N=SPEC
		{"", "x", ""},                            // not an id
		{"server.4=h:1:2:leader;1", "", ""},      // unknown role
	} {
		if _, err := m.reconfigure(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("reconfigure %q accepted", bad)
		}
	}
}

func TestParsePeerErrors(t *testing.T) {
	for _, spec := range [][2]string{{"0", "a:1:2"}, {"1", "a:1"}, {"1", "a:x:2"}, {"1", "a:1:2:boss"}, {"1", ":1:2"}, {"1", "a:1:2;h:x"}} {
		if _, err := ParsePeer(spec[0], spec[1]); err == nil {
			t.Errorf("server.%s=%s accepted", spec[0], spec[1])
		}
	}
}

// An IPv6 member is written with its address in brackets, as ZooKeeper 3.8 reads it
// (ConfigUtils.getHostAndPort) and shows it in /zookeeper/config; zkraft refused the
// line ("is not host:peerPort:electionPort").
func TestParsePeerIPv6(t *testing.T) {
	p, err := ParsePeer("1", "[::1]:2888:3888:participant;[::1]:2181")
	if err != nil {
		t.Fatal(err)
	}
	if p.PeerAddr != "[::1]:2888" || p.RaftAddr != "[::1]:3888" || p.ClientAddr != "[::1]:2181" {
		t.Fatalf("parsed %+v", p)
	}
	if got, want := p.Spec(), "[::1]:2888:3888:participant;[::1]:2181"; got != want {
		t.Fatalf("Spec %q, want %q", got, want)
	}
	if p, err := ParsePeer("2", "[fe80::1]:2888:3888;2181"); err != nil || p.ClientAddr != "0.0.0.0:2181" || p.RaftAddr != "[fe80::1]:3888" {
		t.Fatalf("%+v %v", p, err)
	}
	for _, spec := range []string{"[::1:2888:3888", "::1:2888:3888", "[::1]:2888:3888;[::1:2181"} {
		if _, err := ParsePeer("1", spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
}

// A new cluster's first leader proposes the configured membership as soon as it leads,
// ahead of its barrier, so every session (created after the barrier's round at the
// latest) finds /zookeeper/config written, as on a ZooKeeper ensemble. (peerBack's
// barrier, for a member that answers again, is off: it could be the term's first.)
func TestFirstLeaderProposesTheMembershipBeforeItsBarrier(t *testing.T) {
	nodes := openMembersWith(t, threePeers(t), func(_ Peer, c *Config) { c.noPeerBackBarrier = true })
	l := leaderOf(t, nodes)
	deadline := time.Now().Add(10 * time.Second)
	for _, ok := l.FSM.Members(); !ok; _, ok = l.FSM.Members() {
		if time.Now().After(deadline) {
			t.Fatal("no membership written")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The term is the membership entry's own (leadership may have moved since); its
	// leader's barrier after the election, the term's first, must come after it.
	term, setConfig := uint64(0), uint64(0)
	last, err := l.store.Log.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	firstBarrier := map[uint64]uint64{} // term -> the index of its first barrier
	for i := uint64(1); i <= last; i++ {
		var e raft.Log
		if err := l.store.Log.GetLog(i, &e); err != nil {
			t.Fatal(err)
		}
		switch {
		case e.Type == raft.LogBarrier && firstBarrier[e.Term] == 0:
			firstBarrier[e.Term] = i
		case setConfig == 0 && e.Type == raft.LogCommand:
			if en, err := UnmarshalEntry(e.Data); err == nil && en.Op == OpSetConfig {
				term, setConfig = e.Term, i
			}
		}
	}
	barrier := firstBarrier[term]
	if setConfig == 0 {
		t.Fatal("no membership entry in the leader's log")
	}
	if barrier == 0 {
		t.Skipf("term %d, the membership's, holds no barrier: its leader lost the term before its barrier", term)
	}
	if barrier < setConfig {
		t.Fatalf("term %d: the leader's barrier at index %d, the membership at %d; want the membership first", term, barrier, setConfig)
	}
}

// TestTheMembershipPrecedesWritesThatWaitedForALeader: writes proposed on every member
// before any leader exists reach the first leader before it hears that it leads (held
// here by beforeLeading); the membership is still the first command of the log, so no
// session or write sees a cluster without /zookeeper/config.
func TestTheMembershipPrecedesWritesThatWaitedForALeader(t *testing.T) {
	peers := threePeers(t)
	nodes := openMembersWith(t, peers, func(_ Peer, c *Config) {
		c.beforeLeading = func() { time.Sleep(300 * time.Millisecond) }
	})
	var wg sync.WaitGroup
	errs := make(chan error, 3*4)
	for id, n := range nodes {
		for i := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := fmt.Sprintf("/w%s-%d", id, i)
				deadline := time.Now().Add(10 * time.Second)
				for {
					err := n.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: p, Acl: open}}).Error()
					if err == nil {
						return
					}
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("%s: %w", p, err)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	l := leaderOf(t, nodes)
	last, err := l.store.Log.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	var ops []int32
	for i := uint64(1); i <= last; i++ {
		var e raft.Log
		if err := l.store.Log.GetLog(i, &e); err != nil {
			t.Fatal(err)
		}
		if e.Type != raft.LogCommand {
			continue
		}
		en, err := UnmarshalEntry(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, en.Op)
	}
	if len(ops) < 13 || ops[0] != OpSetConfig {
		t.Fatalf("the log's commands are ops %v; want the membership (%d) first, then the 12 creates", ops, OpSetConfig)
	}
}

// A leader is established (and its server answers mntr as serving) only once it has
// applied the membership it writes first: a ZooKeeper ensemble's leader shows its
// configuration from the first answer.
func TestAnEstablishedLeaderHoldsTheMembership(t *testing.T) {
	_, _, nodes := openThree(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		for _, n := range nodes {
			if n.Established() {
				if _, ok := n.FSM.Members(); !ok {
					t.Fatalf("member %s is an established leader without the membership", n.ID())
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no established leader")
		}
		time.Sleep(time.Millisecond)
	}
}

// A leader whose barrier after the election is refused while it still leads (raft
// refuses every command while a leadership transfer is on its way, and this one fails:
// its target is down) tries again and becomes established, so it expires sessions and
// its server answers mntr. Two of three members run; the first to lead starts a
// transfer to the third before its barrier.
func TestALeaderWhoseTransferFailedBecomesEstablished(t *testing.T) {
	peers := threePeers(t)
	down := peers[2]
	var logs lockedBuffer
	ready := make(chan struct{})
	nodes := map[string]*Node{}
	var once sync.Once
	transfer := make(chan error, 1)
	for _, p := range peers[:2] {
		cfg := DefaultConfig(t.TempDir())
		cfg.ID, cfg.Peers = p.ID, peers
		// Raft gives a transfer an election timeout (here the heartbeat timeout).
		cfg.HeartbeatTimeout = 400 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg.beforeLeading = func() {
			<-ready
			once.Do(func() {
				r := nodes[p.ID].raft
				f := r.LeadershipTransferToServer(raft.ServerID(down.ID), raft.ServerAddress(down.RaftAddr))
				go func() { transfer <- f.Error() }()
				// Return once raft refuses commands: the transfer is on its way.
				for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
					if errors.Is(r.Barrier(0).Error(), raft.ErrLeadershipTransferInProgress) {
						return
					}
				}
			})
		}
		n, err := Open(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		nodes[p.ID] = n
	}
	close(ready)
	if err := <-transfer; err == nil {
		t.Fatal("the transfer to a member that is down succeeded")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		established := false
		for _, n := range nodes {
			established = established || n.Established()
		}
		if established {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no established leader 10 s after the failed transfer; logs:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "barrier after election refused") {
		t.Fatalf("the transfer did not refuse the first barrier; logs:\n%s", logs.String())
	}
}
