package quorum

import (
	"errors"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// A member of a cluster that has no leader (its peers never start) with a one-second
// heartbeat timeout waits up to ten seconds for one to propose a session's write, a
// connection's write or to see an entry applied, and a leader's proposal waits for its
// followers; StopWaiting ends all four at once, as when every member of a cluster stops
// together and no election will end.
func TestStopWaitingEndsWaitsForALeader(t *testing.T) {
	peers := threePeers(t)
	cfg := DefaultConfig(t.TempDir())
	cfg.ID, cfg.Peers = peers[0].ID, peers
	cfg.HeartbeatTimeout = time.Second
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	type outcome struct {
		what string
		err  error
	}
	ended := make(chan outcome, 4)
	go func() {
		f := n.Propose(&Entry{Op: jute.OpSync, Req: &jute.SyncRequest{Path: "/"}})
		ended <- outcome{"Propose", f.Error()}
	}()
	go func() {
		f := n.NewStream().Propose(&Entry{Session: 1, Op: jute.OpSync, Req: &jute.SyncRequest{Path: "/"}})
		ended <- outcome{"Stream.Propose", f.Error()}
	}()
	go func() {
		var err error
		if n.FSM.WaitApplied(1<<40, 10*time.Second) {
			err = errors.New("an entry never proposed was seen applied")
		}
		ended <- outcome{"WaitApplied", err}
	}()
	go func() {
		// A leader's own proposal that its stopping followers never acknowledge: raft
		// answers it only when it steps down.
		f := &retryFuture{n: n, e: &Entry{Op: jute.OpSync}, f: &waitedFuture{done: make(chan struct{})}, until: time.Now().Add(time.Minute)}
		ended <- outcome{"a leader's proposal", f.Error()}
	}()
	time.Sleep(300 * time.Millisecond) // every wait has begun
	select {
	case o := <-ended:
		t.Fatalf("%s ended before StopWaiting: %v", o.what, o.err)
	default:
	}
	stopped := time.Now()
	n.StopWaiting()
	for range 4 {
		select {
		case o := <-ended:
			if o.what == "WaitApplied" {
				if o.err != nil {
					t.Error(o.err)
				}
			} else if !errors.Is(o.err, ErrNoLeader) {
				t.Errorf("%s: %v, want ErrNoLeader", o.what, o.err)
			}
			if d := time.Since(stopped); d > 3*time.Second {
				t.Errorf("%s ended %v after StopWaiting", o.what, d)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a wait went on 5s after StopWaiting")
		}
	}
}
