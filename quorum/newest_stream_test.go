package quorum

import (
	"bufio"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// lateNet is a Network whose dialed streams can be made to deliver late, as TCP does over
// a lossy or congested path: a write returns at once (it is "in the socket"), the bytes
// arrive after the delay, and Close (FIN) comes after the bytes written before it.
type lateNet struct {
	mu    sync.Mutex
	conns map[string][]*lateConn // by dialed addr
}

func (l *lateNet) Listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

func (l *lateNet) Dial(addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	lc := &lateConn{Conn: c, q: make(chan lateWrite, 1024), closed: make(chan struct{})}
	go lc.run()
	l.mu.Lock()
	if l.conns == nil {
		l.conns = map[string][]*lateConn{}
	}
	l.conns[addr] = append(l.conns[addr], lc)
	l.mu.Unlock()
	return lc, nil
}

func (l *lateNet) delayAll(addr string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns[addr] {
		c.delay.Store(int64(d))
	}
}

type lateWrite struct {
	at time.Time
	b  []byte
}

type lateConn struct {
	net.Conn
	delay     atomic.Int64
	q         chan lateWrite
	closeOnce sync.Once
	closed    chan struct{}
}

func (c *lateConn) run() {
	for {
		select {
		case w := <-c.q:
			time.Sleep(time.Until(w.at))
			c.Conn.Write(w.b)
		case <-c.closed:
			for {
				select {
				case w := <-c.q:
					time.Sleep(time.Until(w.at))
					c.Conn.Write(w.b)
				default:
					c.Conn.Close()
					return
				}
			}
		}
	}
}

func (c *lateConn) Write(b []byte) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	c.q <- lateWrite{at: time.Now().Add(time.Duration(c.delay.Load())), b: append([]byte(nil), b...)}
	return len(b), nil
}

func (c *lateConn) SetWriteDeadline(time.Time) error { return nil }

func (c *lateConn) Close() error {
	c.closeOnce.Do(func() {
		if tc, ok := c.Conn.(*net.TCPConn); ok {
			tc.CloseRead() // our reader ends now; the bytes already written still go out
		}
		close(c.closed)
	})
	return nil
}

// A connection's first write, forwarded on a stream the follower then gave up (its
// outcome unknown, the connection closed), reaches the leader late, after the same
// session's next connection on the same member wrote and was acknowledged. The leader
// refuses it, because the member has opened a newer stream since: were it appended, the
// FSM's write cursor would take it (the first write of "another connection") and the
// client's older write would overwrite its newer, acknowledged one.
func TestALateWriteOfAGivenUpStreamIsRefused(t *testing.T) {
	peers := threePeers(t)
	nets := map[string]*lateNet{}
	for _, p := range peers {
		nets[p.ID] = &lateNet{}
	}
	nodes := openMembersWith(t, peers, func(p Peer, cfg *Config) { cfg.Network = nets[p.ID] })
	leader, follower := leaderAndFollowerOf(t, nodes)
	const sid = 0x77
	propose(t, follower, &Entry{Session: sid, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	s0 := follower.NewStream()
	acknowledged(t, s0.Propose(&Entry{Session: sid, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/x", Data: []byte("init"), Acl: open}}), "create /x")
	var leaderPeerAddr string
	for _, p := range peers {
		if p.ID == leader.cfg.ID {
			leaderPeerAddr = p.PeerAddr
		}
	}
	follower.fwd.mu.Lock()
	st1 := follower.fwd.st
	follower.fwd.mu.Unlock()
	nets[follower.cfg.ID].delayAll(leaderPeerAddr, 1500*time.Millisecond)

	// Connection 1's first write goes on st1 and is delayed on the way. Then the
	// follower gives st1 up (as on the leader's "left" frame), which fails the write:
	// outcome unknown.
	s1 := follower.NewStream()
	f1 := setX(s1, sid, "old")
	st1.leave()
	// The client comes back on a new connection to the same member and writes again.
	s2 := follower.NewStream()
	r2 := acknowledged(t, setX(s2, sid, "new"), "connection 2's write")
	if err := f1.Error(); err == nil {
		t.Fatalf("connection 1's write on the given-up stream did not fail: %v", f1.Response())
	}
	time.Sleep(2500 * time.Millisecond) // the delayed bytes reach the leader
	waitSame(t, nodes)
	xIs(t, leader, "new", r2.Zxid)
	// Connection 2 writes on: the cursor is still its own.
	acknowledged(t, setX(s2, sid, "newer"), "connection 2's next write")
}

// A connection's write that the leader refused before appending it is sent again by the
// connection's Stream (settle), as is one that waited for a leader (Node.path). If the
// client came back meanwhile on a new connection to the same member, which wrote and was
// acknowledged, the old connection's write must not follow: the FSM's write cursor
// takes any connection's first write, so the client's older write would land after, and
// over, its newer acknowledged one.
func TestARefusedWriteOfAnOlderConnectionIsNotSentAgain(t *testing.T) {
	leader, follower := leaderAndFollower(t)
	const sid = 0x78
	f1 := refusedFirstWrite(t, leader, follower, sid)
	// The client comes back on a new connection to the same member and writes again.
	r2 := acknowledged(t, setX(follower.NewStream(), sid, "new"), "connection 2's write")
	if err := f1.Error(); err == nil {
		t.Errorf("connection 1's refused write was sent again after connection 2's: %+v", f1.Response())
	}
	follower.Sync()
	xIs(t, follower, "new", r2.Zxid)
}

// The same when the client went to another member, wrote there, and came back: moving
// its session back resets the write cursor, which then takes the old connection's first
// write as readily as a new one's.
func TestARefusedWriteOfAConnectionLeftByAMoveIsNotSentAgain(t *testing.T) {
	leader, follower := leaderAndFollower(t)
	const sid = 0x79
	f1 := refusedFirstWrite(t, leader, follower, sid)
	propose(t, leader, &Entry{Session: sid, Op: OpMoveSession, Origin: leader.ID()})
	r2 := acknowledged(t, setX(leader.NewStream(), sid, "new"), "the write on the other member")
	propose(t, follower, &Entry{Session: sid, Op: OpMoveSession, Origin: follower.ID()})
	if err := f1.Error(); err == nil {
		t.Errorf("the refused write of the connection the session left was sent again: %+v", f1.Response())
	}
	follower.Sync()
	xIs(t, follower, "new", r2.Zxid)
}

// refusedFirstWrite opens session sid through follower, a member of leader's, with /x
// created, and returns the future of a new connection's first write there (/x = "old"),
// which the leader refused unappended: the call of its Error that would send it again
// is left to the test.
func refusedFirstWrite(t *testing.T, leader, follower *Node, sid int64) Future {
	t.Helper()
	propose(t, follower, &Entry{Session: sid, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	acknowledged(t, follower.NewStream().Propose(&Entry{Session: sid, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/x", Data: []byte("init"), Acl: open}}), "create /x")

	// The leader takes a newer stream of the follower's (opened here on its behalf), so
	// it refuses, unappended, what the follower's own stream brings next, as a leader
	// that stepped down refuses it.
	peer, _ := leader.peer(leader.cfg.ID)
	c, err := follower.cfg.Network.Dial(peer.PeerAddr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	claim := leader.streams.of(follower.cfg.ID)
	newest := func() uint64 { claim.mu.Lock(); defer claim.mu.Unlock(); return claim.newest }
	before := newest()
	w := bufio.NewWriter(c)
	if writeFrame(w, framePings, append([]byte{byte(len(follower.cfg.ID))}, follower.cfg.ID...)) != nil || w.Flush() != nil {
		t.Fatal("the newer stream's ping was not sent")
	}
	for deadline := time.Now().Add(5 * time.Second); newest() == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the leader did not take the newer stream")
		}
	}

	s1 := follower.NewStream()
	f1 := setX(s1, sid, "old")
	s1.mu.Lock()
	refused := s1.out[0].inner.(*forwardFuture).done
	s1.mu.Unlock()
	select {
	case <-refused:
	case <-time.After(5 * time.Second):
		t.Fatal("connection 1's write was not refused")
	}
	return f1
}

// setX has s write data to /x, as a write of session sid.
func setX(s *Stream, sid int64, data string) Future {
	return s.Propose(&Entry{Session: sid, Op: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/x", Data: []byte(data), Version: -1}})
}

// acknowledged waits for f and returns its result, failing the test unless it is OK.
func acknowledged(t *testing.T, f Future, what string) *Result {
	t.Helper()
	if err := f.Error(); err != nil || f.Response().(*Result).Err != jute.OK {
		t.Fatalf("%s: %v %v", what, err, f.Response())
	}
	return f.Response().(*Result)
}

// xIs fails the test unless /x holds data, last written at zxid, on n.
func xIs(t *testing.T, n *Node, data string, zxid int64) {
	t.Helper()
	var got []byte
	var mzxid int64
	n.FSM.Read(func(tr *datatree.Tree, _ *session.Table) {
		d, st, _ := tr.Get("/x")
		got, mzxid = d, st.Mzxid
	})
	if string(got) != data || mzxid != zxid {
		t.Fatalf("/x = %q (mzxid %d), want the acknowledged %q at %d", got, mzxid, data, zxid)
	}
}

// A snapshot installed on a member replaces its sessions without a closeSession for the
// ones it drops; their records of the newest connection went with them (they stayed for
// good, one per session the member had served).
func TestSnapshotInstallDropsTheClaimsOfSessionsItHasNot(t *testing.T) {
	src := NewFSM(datatree.Options{})
	src.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: (&Entry{Session: 0x100, Op: jute.OpCreateSession, Time: 1,
		Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}}).Marshal()})
	snapshot := snapshotOf(t, src)
	n, err := Open(DefaultConfig(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	for _, id := range []int64{0x100, 0x200} {
		n.sessionConns.of(id).whileNewest(1, func() {})
	}
	if err := n.FSM.Restore(snapshotReader(snapshot)); err != nil {
		t.Fatal(err)
	}
	var kept []int64
	n.sessionConns.claims.Range(func(k, _ any) bool {
		kept = append(kept, k.(int64))
		return true
	})
	if len(kept) != 1 || kept[0] != 0x100 {
		t.Fatalf("claims after the snapshot install: %#x, want only 0x100's", kept)
	}
}
