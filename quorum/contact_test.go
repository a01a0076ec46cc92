package quorum

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// startContactTransport is a member's raft transport on a loopback port, answering every
// AppendEntries with success until its transport is closed.
func startContactTransport(t *testing.T) *contactTransport {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := &openStreams{}
	layer := &streamLayer{Listener: readAheadListener{ln, &received{}, accepted}, network: TCP{}, advertise: ln.Addr()}
	ct := &contactTransport{NetworkTransport: raft.NewNetworkTransport(layer, 3, time.Second, io.Discard), accepted: accepted,
		reach: newReachability(slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now, time.Minute)}
	go func() {
		for rpc := range ct.Consumer() {
			rpc.Respond(&raft.AppendEntriesResponse{Term: 1, Success: true}, nil)
		}
	}()
	t.Cleanup(func() { ct.Close() })
	return ct
}

// A peer's outage closes the pipeline to it: raft finds a dead pipeline only when it next
// writes to it, which may be after the peer is back (the leader's barrier for a member
// that answered again writes to it at once), and that failure would be logged as a second
// outage a moment after the first ended.
func TestAnOutageClosesThePipelineToThePeer(t *testing.T) {
	leader, follower := startContactTransport(t), startContactTransport(t)
	target := raft.ServerAddress(follower.LocalAddr())
	heartbeat := func() error {
		return leader.AppendEntries("2", target, &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("1"), Addr: []byte(leader.LocalAddr())}, Term: 1}, &raft.AppendEntriesResponse{})
	}
	if err := heartbeat(); err != nil {
		t.Fatal(err)
	}
	if _, ok := leader.answered.Load(raft.ServerID("2")); !ok {
		t.Fatal("a heartbeat answered was not noted")
	}
	pipe, err := leader.AppendEntriesPipeline("2", target)
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	follower.Close() // its process ends: its listener and every stream it accepted close
	if err := heartbeat(); err == nil {
		t.Fatal("a heartbeat to a closed member succeeded")
	}
	if n := leader.reach.nDown.Load(); n != 1 {
		t.Fatalf("%d peers down after a failed heartbeat, want 1", n)
	}
	if _, ok := leader.answered.Load(raft.ServerID("2")); ok {
		t.Fatal("a member whose process ended still counts as having answered (a reconfig's synced members)")
	}
	leader.reach.answered("2") // the member is back
	_, err = pipe.AppendEntries(&raft.AppendEntriesRequest{Term: 1, Entries: []*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand}}}, &raft.AppendEntriesResponse{})
	if err == nil {
		t.Fatal("a batch went out on the pipeline opened before the member's outage")
	}
	if n := leader.reach.nDown.Load(); n != 0 {
		t.Fatalf("the pipeline closed as the outage began (%v) started a second outage", err)
	}
}
