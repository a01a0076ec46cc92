package server

import (
	"bufio"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// A follower applies a write one hop after the leader learns it is committed: from the
// leader's commit notice, not from raft's next AppendEntries. Raft's own fallback
// (CommitTimeout) is a minute here and no later entry is written, so the follower can
// only have each write from the notice.
func TestFollowerAppliesOnCommitNotice(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.Tune = func(q *quorum.Config) { q.CommitTimeout = time.Minute }
	})
	l, f := tc.leader(), tc.follower()
	c := dial(t, tc.addr(l))
	c.connect(0, nil)
	early := tc.servers[f].node.FSM.EarlyApplied()
	var lags []time.Duration
	for i := 0; i < 9; i++ {
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/p" + strconv.Itoa(i), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create: %d", h.Err)
		}
		zxid := tc.servers[l].node.FSM.LastZxid()
		start := time.Now()
		for tc.servers[f].node.FSM.LastZxid() < zxid {
			if time.Since(start) > 20*time.Second {
				t.Fatalf("the follower never applied write %d", i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lags = append(lags, time.Since(start))
	}
	if n := tc.servers[f].node.FSM.EarlyApplied() - early; n < 9 {
		t.Fatalf("the follower applied %d of 9 writes on a commit notice", n)
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("follower lag after the leader's answer: median %v, max %v", lags[4], lags[8])
}

// lane is a client that pipelines creates /o/<lane>-<conn>-<seq> on one connection
// after another, moving to the next member when its connection ends, and records which
// creates were acknowledged.
type lane struct {
	name  string
	addrs []string
	at    int // index into addrs of the member it connects to first

	mu    sync.Mutex
	acked map[string]bool
	conns int
}

func (ln *lane) run(stop <-chan struct{}) {
	for ln.conns < 40 {
		select {
		case <-stop:
			return
		default:
		}
		nc, ok := ln.connect()
		if !ok {
			ln.at = (ln.at + 1) % len(ln.addrs)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		ln.mu.Lock()
		ln.conns++
		conn := ln.conns
		ln.mu.Unlock()
		ln.pipeline(nc, conn, stop)
		ln.at = (ln.at + 1) % len(ln.addrs)
	}
}

func (ln *lane) connect() (net.Conn, bool) {
	nc, err := net.DialTimeout("tcp", ln.addrs[ln.at], time.Second)
	if err != nil {
		return nil, false
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := &jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}}
	if _, err := nc.Write(jute.AppendFrame(nil, req)); err != nil {
		nc.Close()
		return nil, false
	}
	b, err := jute.ReadFrame(bufio.NewReader(nc), nil, jute.DefaultMaxBuffer)
	var resp jute.Connected
	if err == nil {
		resp.Decode(jute.NewDecoder(b))
	}
	if err != nil || resp.SessionId == 0 {
		nc.Close()
		return nil, false
	}
	nc.SetDeadline(time.Time{})
	return nc, true
}

// pipeline keeps up to 32 creates in flight until the connection ends or stop.
func (ln *lane) pipeline(nc net.Conn, conn int, stop <-chan struct{}) {
	defer nc.Close()
	window := make(chan struct{}, 32)
	ended := make(chan struct{})
	paths := sync.Map{} // xid -> path
	go func() {
		defer close(ended)
		br := bufio.NewReader(nc)
		for {
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			b, err := jute.ReadFrame(br, nil, jute.DefaultMaxBuffer)
			if err != nil {
				return
			}
			var h jute.ReplyHeader
			h.Decode(jute.NewDecoder(b))
			if p, ok := paths.LoadAndDelete(h.Xid); ok {
				if h.Err == 0 {
					ln.mu.Lock()
					ln.acked[p.(string)] = true
					ln.mu.Unlock()
				}
				<-window
			}
		}
	}()
	for seq := int32(1); ; seq++ {
		select {
		case window <- struct{}{}:
		case <-ended:
			return
		case <-stop:
			return
		}
		p := fmt.Sprintf("/o/%s-%03d-%06d", ln.name, conn, seq)
		paths.Store(seq, p)
		req := jute.AppendFrame(nil, &jute.RequestHeader{Xid: seq, Type: jute.OpCreate}, &jute.CreateRequest{Path: p, Acl: openACL})
		nc.SetWriteDeadline(time.Now().Add(5 * time.Second))
		if _, err := nc.Write(req); err != nil {
			return
		}
	}
}

// Pipelined writes of one connection are applied in order or not at all, whatever
// happens to the leader: for every connection the writes in the tree are a prefix
// 1..k of those it sent (never write B without the earlier write A), on every member,
// and every acknowledged write is there. Two lanes pipeline at once, one starting on
// the leader (raft.Apply) and one on a follower (forwarded), through a hand-over of
// leadership, a leader stopped mid-stream and restarted, and a partition of a leader.
func TestConnectionWritesKeepTheirOrderThroughLeaderChanges(t *testing.T) {
	tc := newTestCluster(t, 3)
	setup := dial(t, tc.addr(tc.leader()))
	setup.connect(0, nil)
	if h := setup.call(jute.OpCreate, &jute.CreateRequest{Path: "/o", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create /o: %d", h.Err)
	}
	addrs := []string{tc.addr(0), tc.addr(1), tc.addr(2)}
	lanes := []*lane{
		{name: "l", addrs: addrs, at: tc.leader(), acked: map[string]bool{}},
		{name: "f", addrs: addrs, at: tc.follower(), acked: map[string]bool{}},
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, ln := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ln.run(stop)
		}()
	}
	pause := func() { time.Sleep(400 * time.Millisecond) }
	pause()
	if err := tc.servers[tc.leader()].node.HandOver(5 * time.Second); err != nil {
		t.Fatalf("hand-over: %v", err)
	}
	pause()
	l := tc.leader()
	tc.stop(l)
	pause()
	tc.start(l)
	pause()
	cut := tc.leader()
	tc.net.Isolate(strconv.Itoa(cut + 1))
	pause()
	tc.net.Heal()
	pause()
	close(stop)
	wg.Wait()
	tc.converge()

	for i, s := range tc.servers {
		var kids []string
		s.node.FSM.Read(func(tr *datatree.Tree, _ *session.Table) { kids, _, _ = tr.Children("/o") })
		got := map[string]bool{}
		last := map[string]int{} // lane-conn -> highest seq, checked contiguous below
		sort.Strings(kids)
		for _, k := range kids {
			got["/o/"+k] = true
			cut := strings.LastIndex(k, "-")
			seq, _ := strconv.Atoi(k[cut+1:])
			if prev := last[k[:cut]]; seq != prev+1 {
				t.Fatalf("member %d: connection %s has write %d after write %d: not a prefix", i+1, k[:cut], seq, prev)
			}
			last[k[:cut]] = seq
		}
		for _, ln := range lanes {
			ln.mu.Lock()
			for p := range ln.acked {
				if !got[p] {
					t.Fatalf("member %d lacks acknowledged write %s", i+1, p)
				}
			}
			ln.mu.Unlock()
		}
		if i == 0 {
			t.Logf("%d writes applied over %d+%d connections", len(kids), lanes[0].conns, lanes[1].conns)
		}
		if len(kids) == 0 {
			t.Fatal("no write was applied")
		}
	}
}

// An election stalls nobody: while a follower has no leader, a write of one of its
// clients waits for one, and meanwhile another client's reads and pings on the same
// member are answered (reconnecting to a leader holds no lock they need).
func TestElectionStallsNoReader(t *testing.T) {
	tc := newTestCluster(t, 3)
	f := tc.follower()
	r := dial(t, tc.addr(f))
	r.connect(0, nil)
	w := dial(t, tc.addr(f))
	w.connect(0, nil)
	tc.net.Isolate(strconv.Itoa(f + 1))
	defer tc.net.Heal()
	for deadline := time.Now().Add(10 * time.Second); tc.servers[f].node.HasLeader(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) { // its leader's heartbeats stopped
			t.Fatal("the isolated member still has a leader")
		}
	}
	w.send(jute.OpCreate, &jute.CreateRequest{Path: "/w", Acl: openACL})
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		jute.ReadFrame(w.br, nil, jute.DefaultMaxBuffer) // the answer, or the close
	}()
	for i := 0; i < 10; i++ {
		exists(t, r, "/")
		if h := r.ping(); h.Err != 0 {
			t.Fatalf("ping: %d", h.Err)
		}
	}
	select {
	case <-answered:
		t.Fatal("the reads were answered only once the write waiting for a leader gave up: they stalled behind it")
	default:
	}
	if tc.servers[f].node.HasLeader() {
		t.Fatal("the isolated member found a leader")
	}
}

// A member that installs the leader's snapshot while it serves drops its clients, and
// a watch set before comes back with the client (setWatches) and fires for the change
// the snapshot carried.
func TestSnapshotInstallDropsClientsWatchesFire(t *testing.T) {
	tc := newTestClusterWith(t, 3, func(c *Config) {
		c.Tune = func(q *quorum.Config) { q.TrailingLogs = 4 }
	})
	l, f := tc.leader(), tc.follower()
	w := dial(t, tc.addr(l))
	w.connect(0, nil)
	if h := w.call(jute.OpCreate, &jute.CreateRequest{Path: "/w", Acl: openACL}, nil); h.Err != 0 {
		t.Fatalf("create: %d", h.Err)
	}
	tc.converge()
	zc := zkSession(t, 10*time.Second, tc.addr(f))
	_, _, ch, err := zc.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	before := tc.servers[f].node.Stats()["last_snapshot_index"]
	tc.net.Isolate(strconv.Itoa(f + 1))
	if h := w.call(jute.OpSetData, &jute.SetDataRequest{Path: "/w", Data: []byte("changed"), Version: -1}, nil); h.Err != 0 {
		t.Fatalf("set: %d", h.Err)
	}
	for i := 0; i < 20; i++ {
		if h := w.call(jute.OpCreate, &jute.CreateRequest{Path: "/n" + strconv.Itoa(i), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create: %d", h.Err)
		}
	}
	if err := tc.servers[l].Snapshot(); err != nil {
		t.Fatal(err)
	}
	tc.net.Heal()
	ev := nextEvent(t, ch, "data watch set before the snapshot install")
	if ev.Type != zk.EventNodeDataChanged || ev.Path != "/w" {
		t.Fatalf("event %+v", ev)
	}
	tc.converge()
	if after := tc.servers[f].node.Stats()["last_snapshot_index"]; after == before {
		t.Fatalf("the member did not install a snapshot (last snapshot index %s)", after)
	}
	// The leader counts the snapshot it sent (mntr's snap_count, ZooKeeper's SNAP sync).
	if n, _ := strconv.Atoi(mntrLine(askFourLetter(t, tc.addr(l), "mntr"), "snap_count")); n < 1 {
		t.Errorf("the leader's snap_count is %d after it sent a snapshot", n)
	}
}

// A client that wrote through one member and reconnects to another with the zxid it
// last saw is accepted there, every time: the member waits until it has applied that
// zxid instead of refusing. One round has the member cut off while the write commits,
// so it must catch up before it answers.
func TestHandshakeWaitsForLastZxidSeen(t *testing.T) {
	// ZooKeeper's tick: a 200 ms Raft timeout, so a loaded machine (-race) does not hold
	// elections between the rounds; an election would refuse a handshake for its own
	// reason, not the one this test is about.
	tc := newTestClusterWith(t, 3, func(c *Config) { c.TickTime = 2 * time.Second })
	l := tc.leader()
	other := (l + 1) % 3
	for round := 0; round < 100; round++ {
		c := dial(t, tc.addr(l))
		c.connect(0, nil)
		if round == 99 {
			tc.net.Isolate(strconv.Itoa(other + 1))
		}
		h := c.call(jute.OpCreate2, &jute.CreateRequest{Path: "/r" + strconv.Itoa(round), Acl: openACL}, &jute.Create2Response{})
		if h.Err != 0 {
			t.Fatalf("round %d create: %d", round, h.Err)
		}
		if round == 99 {
			if tc.servers[other].node.FSM.LastZxid() >= h.Zxid {
				t.Fatal("the cut member has the write: the round proves nothing")
			}
			tc.net.Heal()
		}
		m := dial(t, tc.addr(other))
		resp := m.tryConnect(jute.Connect{ConnectRequest: jute.ConnectRequest{TimeOut: 10000, LastZxidSeen: h.Zxid, SessionId: c.sid, Passwd: c.pw}})
		if resp == nil {
			t.Fatalf("round %d: refused by the other member", round)
		}
		if resp.SessionId != c.sid {
			t.Fatalf("round %d: session %x, want %x", round, resp.SessionId, c.sid)
		}
		if _, ok := exists(t, m, "/r"+strconv.Itoa(round)); !ok {
			t.Fatalf("round %d: the member answered without the write the client saw", round)
		}
		m.nc.Close()
		c.nc.Close()
	}
}
