package quorum

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Raft reads, through a read-ahead stream, exactly the bytes sent: every kind of request,
// a snapshot's bytes after its request, and bytes that do not decode, after which the
// stream goes on undecoded. The AppendEntries before those bytes reach received.
func TestAReadAheadStreamPassesEveryByte(t *testing.T) {
	var sent []byte
	sent = append(sent, raftEncode(t, false, appendReq(2, 0, 1, 2, 2))...)
	sent = append(sent, raftEncode(t, false, &raft.RequestVoteRequest{Term: 2, LastLogIndex: 3})...)
	sent = append(sent, raftEncode(t, false, &raft.RequestPreVoteRequest{Term: 2})...)
	snap := bytes.Repeat([]byte{rpcAppendEntries, 0xc1}, 40000) // would not decode as requests
	sent = append(sent, raftEncode(t, false, &raft.InstallSnapshotRequest{Term: 2, Size: int64(len(snap))})...)
	sent = append(sent, snap...)
	sent = append(sent, raftEncode(t, false, &raft.TimeoutNowRequest{RPCHeader: raft.RPCHeader{ID: []byte("1")}})...)
	sent = append(sent, raftEncode(t, false, appendReq(2, 3, 2, 2))...)
	sent = append(sent, 99, 1, 2, 3) // a request of no known kind
	sent = append(sent, raftEncode(t, false, appendReq(2, 5, 2))...)

	a, b := net.Pipe()
	recv := &received{}
	c := newReadAheadConn(b, recv)
	defer c.Close()
	go func() {
		for rest := sent; len(rest) > 0; { // in pieces, as a socket delivers them
			n := min(len(rest), 1000)
			if _, err := a.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
		}
		a.Close()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("read %d bytes, sent %d (or they differ)", len(got), len(sent))
	}
	if recv.span(1, 5, 2) == nil {
		t.Fatalf("the AppendEntries were not received: run after %d of %d entries", recv.base, len(recv.entries))
	}
	if recv.span(1, 6, 2) != nil {
		t.Fatal("an AppendEntries after bytes that do not decode was decoded")
	}
}

// The stream is read as bytes arrive, while nobody reads it: the AppendEntries reaches
// received before raft takes it.
func TestAReadAheadStreamReadsBeforeRaftDoes(t *testing.T) {
	a, b := net.Pipe()
	recv := &received{}
	c := newReadAheadConn(b, recv)
	defer c.Close()
	defer a.Close()
	go a.Write(raftEncode(t, false, appendReq(5, 0, 5, 5)))
	for deadline := time.Now().Add(5 * time.Second); recv.span(1, 2, 5) == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the AppendEntries was not read ahead in 5 s")
		}
	}
	// Closing the stream ends a Read that waits.
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(c)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Read")
	}
}

// Closing a member's raft transport closes the streams it accepted, as the end of its
// process would: raft's own Close leaves them open, and a leader's pooled connection
// to a member stopped and started again within one process then met the old transport
// (its handler refusing with "transport shutdown") after the member's return.
func TestClosingTheTransportClosesItsAcceptedStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := &openStreams{}
	layer := &streamLayer{Listener: readAheadListener{ln, &received{}, accepted}, network: TCP{}, advertise: ln.Addr()}
	trans := &contactTransport{NetworkTransport: raft.NewNetworkTransport(layer, 3, time.Second, io.Discard), accepted: accepted}
	var peers []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		peers = append(peers, c)
	}
	// One stream is closed before the transport: it leaves the set.
	deadline := time.Now().Add(5 * time.Second)
	for count(accepted) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 streams accepted", count(accepted))
		}
		time.Sleep(time.Millisecond)
	}
	peers[0].Close()
	for count(accepted) > 1 {
		if time.Now().After(deadline) {
			t.Fatal("a stream its peer closed is still kept")
		}
		time.Sleep(time.Millisecond)
	}
	trans.Close()
	peers[1].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := peers[1].Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("a stream of a closed transport: read %v, want EOF", err)
	}
	if n := count(accepted); n != 0 {
		t.Fatalf("%d streams kept after the transport closed", n)
	}
}

func count(o *openStreams) int {
	n := 0
	o.m.Range(func(_, _ any) bool { n++; return true })
	return n
}
