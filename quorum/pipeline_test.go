package quorum

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/zkraft/zkraft/jute"
)

// tcpTransport is raft's TCP transport on a loopback port, closed with the test.
func tcpTransport(t *testing.T) *raft.NetworkTransport {
	t.Helper()
	tr, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 5*time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// Raft's pipeline decoder returns at a refused batch, and its sender may send more before
// it notices. Those sends must return: on raft's own pipeline the second one after the
// refusal waits forever (the transport's queues are unbuffered: the first is taken by
// the transport's answer reader, which then waits for a decoder that is gone), and so
// does the Close deferred behind it.
func TestARefusedBatchDoesNotWedgeThePipelinesSender(t *testing.T) {
	leader, follower := tcpTransport(t), tcpTransport(t)
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	go func() { // the follower refuses its second batch and takes the rest
		for n := 1; ; n++ {
			select {
			case rpc := <-follower.Consumer():
				rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: n != 2}, nil)
			case <-stop:
				return
			}
		}
	}()
	inner, err := leader.AppendEntriesPipeline("follower", follower.LocalAddr())
	if err != nil {
		t.Fatal(err)
	}
	p := newPipeline(inner, nil, "follower")
	t.Cleanup(func() { p.Close() })
	decoded := make(chan int, 1)
	go func() { // raft's decoder: its tests for stopping, and nothing else
		for n := 1; ; n++ {
			select {
			case f := <-p.Consumer():
				if !f.Response().Success || f.Response().Term > f.Request().Term {
					decoded <- n
					return
				}
			case <-stop:
				return
			}
		}
	}()

	send := func(i int) {
		t.Helper()
		errc := make(chan error, 1)
		go func() {
			_, err := p.AppendEntries(&raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax}, Term: 1}, new(raft.AppendEntriesResponse))
			errc <- err
		}()
		select {
		case err := <-errc:
			if err != nil {
				t.Logf("batch %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("batch %d, sent after the decoder stopped, still waits after 5 s", i)
		}
	}
	send(1)
	send(2)
	select {
	case n := <-decoded:
		if n != 2 {
			t.Fatalf("the decoder stopped at answer %d, want the refusal (2)", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the decoder never saw the refusal")
	}
	for i := 3; i <= 8; i++ {
		send(i)
	}
	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close still waits after 5 s")
	}
}

// refusingLogs fails its member's next refuse stores, as a full disk would: raft then
// answers that AppendEntries unsuccessful.
type refusingLogs struct {
	raft.LogStore
	refuse atomic.Int32
}

// IsMonotonic passes the store's answer on, as raft's choice of how to drop old entries
// depends on it (raft.MonotonicLogStore).
func (l *refusingLogs) IsMonotonic() bool {
	m, ok := l.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

func (l *refusingLogs) StoreLogs(es []*raft.Log) error {
	if len(es) > 0 && l.refuse.Add(-1) >= 0 {
		return errors.New("refused by the test")
	}
	return l.LogStore.StoreLogs(es)
}

// A follower that refuses a batch while the leader pipelines writes to it gets the log
// again, ten times over. On raft's own pipeline a refusal wedged the leader's sender to
// that follower whenever it sent twice more before it saw the decoder gone (see the test
// above), and the follower then never got another entry; the test then fails a round,
// and its cleanup waits on raft's Shutdown, which waits on the wedged sender, until the
// package's timeout.
func TestAFollowerThatRefusedABatchGetsTheLogAgain(t *testing.T) {
	nodes, stores := openMembersWrappingLogs(t, threePeers(t), func(c *Config) { c.CommitTimeout = 5 * time.Millisecond },
		func(l raft.LogStore) *refusingLogs { return &refusingLogs{LogStore: l} })
	leader, follower := leaderAndFollowerOf(t, nodes)
	propose(t, leader, &Entry{Session: 7, Op: jute.OpCreateSession, Req: &SessionRequest{Timeout: 30000, Password: make([]byte, 16)}})
	waitSame(t, nodes)
	refusing := stores[follower.cfg.ID]

	// Writes flow all along, so the leader has more to send right after each refusal.
	stop := make(chan struct{})
	failed := make(chan error, 1)
	go func() {
		defer close(failed)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var fs []Future
			for j := range 10 {
				fs = append(fs, leader.Propose(&Entry{Session: 7, Op: jute.OpCreate, Req: &jute.CreateRequest{Path: fmt.Sprintf("/w%d-%d", i, j), Acl: open}}))
			}
			for _, f := range fs {
				if err := f.Error(); err != nil {
					failed <- err
					return
				}
			}
		}
	}()
	for round := range 10 {
		refusing.refuse.Store(1)
		for deadline := time.Now().Add(5 * time.Second); refusing.refuse.Load() >= 0; time.Sleep(time.Millisecond) {
			select {
			case err := <-failed:
				t.Fatalf("round %d: a write failed: %v", round, err)
			default:
			}
			if time.Now().After(deadline) {
				close(stop)
				t.Fatalf("round %d: the follower was sent no batch for 5 s while writes flowed", round)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	waitSame(t, nodes) // fails after 15 s if the follower gets no more entries
}
