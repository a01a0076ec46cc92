package quorum

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// forwarded is what a member sends the leader: every kind of entry, with identities, a
// connection's place and a reconfig among them.
func forwarded() []*Entry {
	es := entries()
	for i, e := range es {
		e.Origin, e.Conn, e.Seq = "2", 77, uint64(i+1)
	}
	es[2].Super = true
	es[3].Ids = []jute.Id{{Scheme: "digest", Id: "u:x"}, {Scheme: "ip", Id: "10.0.0.1"}}
	return append(es, &Entry{Session: 0x100, Op: jute.OpReconfig, Origin: "2", Conn: 77, Seq: 99,
		Req: &jute.ReconfigRequest{JoiningServers: "server.4=h:1:2;3", CurConfigId: -1}})
}

// The leader writes its time (and its verdict on a reconfig) into the forwarded bytes;
// the log gets the bytes it got before, when it decoded the entry and encoded it again.
func TestRestampWritesWhatMarshalWould(t *testing.T) {
	for i, e := range forwarded() {
		for _, op := range []int32{e.Op, OpReconfigNoQuorum} {
			frame := e.Marshal()
			old, err := UnmarshalEntry(frame)
			if err != nil {
				t.Fatal(err)
			}
			old.Time, old.Op = 1_700_000_000_123+int64(i), op
			got, err := UnmarshalEntry(frame)
			if err != nil {
				t.Fatal(err)
			}
			got.Time, got.Op = old.Time, op
			if want, b := old.Marshal(), got.restamp(frame); !bytes.Equal(b, want) {
				t.Fatalf("entry %d, op %d: restamped %x, encoded again %x", i, op, b, want)
			}
		}
	}
	// An entry of the older type is encoded again, as the current one.
	v1 := forwarded()[4].Marshal()
	v1[0] = entryV1
	connAt := entryOpAt + 4 + 1 + 4 + len("2") // after Op, Super and Origin
	v1 = append(v1[:connAt], v1[connAt+8:]...)
	e, err := UnmarshalEntry(v1)
	if err != nil || e.Conn != 0 || e.Seq != 5 {
		t.Fatalf("v1 entry: %+v, %v", e, err)
	}
	e.Time = 5
	if b := e.restamp(v1); b[0] != entryV2 || !bytes.Equal(b, e.Marshal()) {
		t.Fatalf("a v1 entry restamped: %x", b)
	}
}

// A leader appends a forwarded entry with its own time, and ends the stream of a member
// that sends bytes that do not decode as an entry, appending nothing.
func TestLeaderAppendsForwardedBytes(t *testing.T) {
	peers := threePeers(t)[:1]
	n := openMember(t, "1", t.TempDir(), peers)
	defer n.Close()
	if err := n.WaitLeader(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	send := func(body []byte) (io.Reader, func()) {
		t.Helper()
		c, err := n.cfg.Network.Dial(peers[0].PeerAddr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(c)
		if err := writeFrame(w, frameEntry, body); err != nil || w.Flush() != nil {
			t.Fatal(err)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		return c, func() { c.Close() }
	}

	e := &Entry{Session: 0x300, Op: jute.OpCreateSession, Time: 1, Origin: "2", Seq: 1,
		Req: &SessionRequest{Timeout: 4000, Password: make([]byte, 16)}}
	before := time.Now().UnixMilli()
	_, done := send(e.Marshal())
	defer done()
	// The entry, among the leader's own (the membership it writes first).
	var l raft.Log
	var got *Entry
	for deadline := time.Now().Add(5 * time.Second); got == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the forwarded entry was not appended")
		}
		for i := uint64(1); i <= n.raft.LastIndex() && got == nil; i++ {
			if err := n.store.Log.GetLog(i, &l); err != nil || l.Type != raft.LogCommand {
				continue
			}
			if d, err := UnmarshalEntry(l.Data); err == nil && d.Session == e.Session {
				got = d
			}
		}
	}
	if got.Time < before || got.Time > time.Now().UnixMilli() {
		t.Fatalf("appended %+v; want the leader's time", got)
	}
	e.Time = got.Time
	if !bytes.Equal(l.Data, e.Marshal()) {
		t.Fatalf("appended %x, want %x", l.Data, e.Marshal())
	}

	good := (&Entry{Session: 0x300, Op: jute.OpSync, Origin: "2", Seq: 2, Req: &jute.SyncRequest{Path: "/"}}).Marshal()
	for name, body := range map[string][]byte{
		"truncated": good[:len(good)-1],
		"trailing":  append(append([]byte(nil), good...), 0),
		"type byte": append([]byte{3}, good[1:]...),
		"header":    good[:entryOpAt],
	} {
		last := n.raft.LastIndex()
		c, done := send(body)
		// The leader may send a commit notice first; then it ends the stream.
		if _, err := io.Copy(io.Discard, c); err != nil {
			t.Errorf("%s: the leader kept the stream: %v", name, err)
		}
		done()
		if n.raft.LastIndex() != last {
			t.Errorf("%s: appended", name)
		}
	}
}

// flakyListener fails its first Accept with EMFILE (a moment out of file descriptors),
// then hands out the connections given to it, until closed.
type flakyListener struct {
	calls  atomic.Int32
	conns  chan net.Conn
	closed chan struct{}
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.calls.Add(1) == 1 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *flakyListener) Close() error   { close(l.closed); return nil }
func (l *flakyListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// A failed Accept that is not the listener's close (out of descriptors, say) is tried
// again: the member goes on accepting streams, and stops only when the listener closes.
func TestPeerListenerOutlivesATemporaryAcceptError(t *testing.T) {
	l := &flakyListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	n := &Node{cfg: Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, done: make(chan struct{})}
	done := make(chan struct{})
	go func() { n.servePeers(l); close(done) }()
	a, b := net.Pipe()
	defer a.Close()
	select {
	case l.conns <- b: // taken after the failed Accept
	case <-done:
		t.Fatal("servePeers returned after one temporary Accept error")
	case <-time.After(10 * time.Second):
		t.Fatal("servePeers accepted nothing after a temporary Accept error")
	}
	l.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("servePeers did not return once its listener closed")
	}
}
