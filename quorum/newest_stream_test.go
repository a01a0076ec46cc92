package quorum

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	f0 := s0.Propose(&Entry{Session: sid, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: "/x", Data: []byte("init"), Acl: open}})
	if err := f0.Error(); err != nil || f0.Response().(*Result).Err != jute.OK {
		t.Fatalf("create /x: %v %v", err, f0.Response())
	}
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
	f1 := s1.Propose(&Entry{Session: sid, Op: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/x", Data: []byte("old"), Version: -1}})
	st1.leave()
	// The client comes back on a new connection to the same member and writes again.
	s2 := follower.NewStream()
	f2 := s2.Propose(&Entry{Session: sid, Op: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/x", Data: []byte("new"), Version: -1}})
	if err := f2.Error(); err != nil || f2.Response().(*Result).Err != jute.OK {
		t.Fatalf("connection 2's write: %v %v", err, f2.Response())
	}
	r2 := f2.Response().(*Result)
	if err := f1.Error(); err == nil {
		t.Fatalf("connection 1's write on the given-up stream did not fail: %v", f1.Response())
	}
	time.Sleep(2500 * time.Millisecond) // the delayed bytes reach the leader
	waitSame(t, nodes)
	var data []byte
	var mzxid int64
	leader.FSM.Read(func(tr *datatree.Tree, _ *session.Table) {
		d, st, _ := tr.Get("/x")
		data, mzxid = d, st.Mzxid
	})
	if string(data) != "new" || mzxid != r2.Zxid {
		t.Fatalf("/x = %q (mzxid %d), want connection 2's acknowledged %q at %d", data, mzxid, "new", r2.Zxid)
	}
	// Connection 2 writes on: the cursor is still its own.
	f3 := s2.Propose(&Entry{Session: sid, Op: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/x", Data: []byte("newer"), Version: -1}})
	if err := f3.Error(); err != nil || f3.Response().(*Result).Err != jute.OK {
		t.Fatalf("connection 2's next write: %v", err)
	}
}
