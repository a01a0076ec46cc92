package quorum

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// peerPortCut is TCP, except that while cut is set, dials to a peer (forwarding) port
// fail and the forwarding streams already open are closed; raft's ports are untouched.
type peerPortCut struct {
	peerAddrs map[string]bool
	cut       *atomic.Bool
	mu        *sync.Mutex
	conns     *[]net.Conn
}

func (p peerPortCut) Listen(addr string) (net.Listener, error) { return TCP{}.Listen(addr) }

func (p peerPortCut) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	if p.peerAddrs[addr] && p.cut.Load() {
		return nil, errors.New("peer port unreachable")
	}
	c, err := TCP{}.Dial(addr, timeout)
	if err == nil && p.peerAddrs[addr] {
		p.mu.Lock()
		*p.conns = append(*p.conns, c)
		p.mu.Unlock()
	}
	return c, err
}

// A follower that keeps raft with its leader but cannot keep a stream to the leader's
// peer port does not count as having a leader once streamGrace has passed: its clients'
// writes would fail and their sessions' touches never reach the leader, which would
// expire them while the follower answered their pings. It counts again once the stream
// is back. Losing the stream is news on LeaderNews, and the leader is steady only with it.
func TestAFollowerWithoutAStreamToItsLeaderHasNone(t *testing.T) {
	peers := threePeers(t)
	var cut atomic.Bool
	var mu sync.Mutex
	var conns []net.Conn
	addrs := map[string]bool{}
	for _, p := range peers {
		addrs[p.PeerAddr] = true
	}
	nodes := openMembersWith(t, peers, func(_ Peer, cfg *Config) {
		cfg.Network = peerPortCut{peerAddrs: addrs, cut: &cut, mu: &mu, conns: &conns}
	})
	leader, follower := leaderAndFollowerOf(t, nodes)
	await := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 10 s", what)
			}
		}
	}
	await("the follower's stream to its leader", func() bool { st, _ := follower.fwd.usable(); return st != nil })
	if !follower.HasLeader() {
		t.Fatal("a follower with its stream up has no leader")
	}
	if !follower.LeaderSteady() || !leader.LeaderSteady() {
		t.Fatalf("steady: follower %v, leader %v; want both with the stream up", follower.LeaderSteady(), leader.LeaderSteady())
	}
	for len(follower.LeaderNews()) > 0 {
		<-follower.LeaderNews()
	}
	cut.Store(true)
	mu.Lock()
	for _, c := range conns {
		c.Close()
	}
	mu.Unlock()
	// The broken stream is news (a watcher that sleeps while the leader is steady
	// wakes for it), and the leader is no longer steady while raft still names it.
	select {
	case <-follower.LeaderNews():
	case <-time.After(5 * time.Second):
		t.Fatal("no news of the broken stream to the leader in 5 s")
	}
	await("the follower's leader to count as not steady", func() bool { return !follower.LeaderSteady() })
	await("the follower without its stream to count as leaderless", func() bool { return !follower.HasLeader() })
	if id, ok := follower.LeaderID(); !ok || id != leader.cfg.ID {
		t.Fatalf("raft no longer names the leader (%q, %v): the test cut more than the peer port", id, ok)
	}
	if !leader.HasLeader() {
		t.Fatal("the leader itself counts as leaderless")
	}
	cut.Store(false)
	await("the follower to count its leader again once the stream is back", follower.HasLeader)
	await("the follower's leader to be steady again", follower.LeaderSteady)
}

// A standalone server, which forwards nothing, always has its leader: itself.
func TestAStandaloneServerAlwaysHasItsLeader(t *testing.T) {
	n, err := Open(DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for deadline := time.Now().Add(10 * time.Second); !n.IsLeader(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("standalone server never led")
		}
	}
	// Asked over longer than streamGrace, as the server asks every half heartbeat.
	for end := time.Now().Add(3 * streamGrace(n.cfg.HeartbeatTimeout)); time.Now().Before(end); time.Sleep(n.cfg.HeartbeatTimeout / 2) {
		if !n.HasLeader() {
			t.Fatal("a standalone server counts as leaderless")
		}
	}
}
