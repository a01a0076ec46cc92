package quorum

import (
	"log/slog"
	"testing"

	"github.com/hashicorp/raft"
)

// The gate refuses votes and pre-votes (and passes every other RPC), and fails the
// member's own vote requests, until the member holds an entry of its current term: a
// part of a catch-up (entries or a snapshot of an older term) leaves it shut; once open
// it stays open.
func TestVoteGateOpensOnlyOnTheCurrentTerm(t *testing.T) {
	in := make(chan raft.RPC)
	g := newVoteGate(in, slog.Default())
	defer g.close()
	ask := func(cmd any) (refused bool) {
		resp := make(chan raft.RPCResponse, 1)
		in <- raft.RPC{Command: cmd, RespChan: resp}
		select {
		case r := <-resp:
			switch v := r.Response.(type) {
			case *raft.RequestVoteResponse:
				return !v.Granted && v.Term == 0
			case *raft.RequestPreVoteResponse:
				return !v.Granted && v.Term == 0
			}
			t.Fatalf("answered %T", r.Response)
		case rpc := <-g.out:
			if rpc.Command != cmd {
				t.Fatalf("relayed %T for %T", rpc.Command, cmd)
			}
		}
		return false
	}
	if !ask(&raft.RequestVoteRequest{}) || !ask(&raft.RequestPreVoteRequest{}) {
		t.Fatal("a vote passed before raft runs")
	}
	if ask(&raft.AppendEntriesRequest{}) {
		t.Fatal("an AppendEntries was refused")
	}
	current, held := uint64(0), uint64(0)
	g.terms.Store(&termsOf{current: func() uint64 { return current }, held: func() uint64 { return held }})
	for _, c := range []struct{ current, held uint64 }{{0, 0}, {4, 0}, {4, 3}, {5, 4}} {
		current, held = c.current, c.held
		if !ask(&raft.RequestVoteRequest{}) {
			t.Fatalf("term %d, holding term %d: the vote passed", c.current, c.held)
		}
	}
	// Shut, its own vote requests fail before they are sent (no transport is needed).
	ct := &contactTransport{votes: g}
	if err := ct.RequestVote("2", "nowhere", &raft.RequestVoteRequest{}, &raft.RequestVoteResponse{}); err != errVotesWithheld {
		t.Fatalf("RequestVote while shut: %v", err)
	}
	if err := ct.RequestPreVote("2", "nowhere", &raft.RequestPreVoteRequest{}, &raft.RequestPreVoteResponse{}); err != errVotesWithheld {
		t.Fatalf("RequestPreVote while shut: %v", err)
	}
	current, held = 5, 5
	if ask(&raft.RequestVoteRequest{}) || ask(&raft.RequestPreVoteRequest{}) {
		t.Fatal("holding an entry of the current term: a vote was refused")
	}
	current = 6
	if ask(&raft.RequestVoteRequest{}) {
		t.Fatal("the gate shut again")
	}
	if g.refused.Load() != 6 {
		t.Fatalf("%d refused, want 6", g.refused.Load())
	}
}
