package quorum

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
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
// it notices. Those sends must return: on raft's own pipeline the third one after the
// refusal waits forever (the transport's queues are unbuffered and nobody reads its
// answers), and so does the Close deferred behind it.
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
	p := newPipeline(inner, nil)
	decoded := make(chan int, 1)
	go func() { // raft's decoder: its tests for stopping, and nothing else
		n := 0
		for f := range p.Consumer() {
			n++
			if !f.Response().Success || f.Response().Term > f.Request().Term {
				decoded <- n
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
			inner.Close() // frees the waiting send, so the test leaves nothing behind
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
