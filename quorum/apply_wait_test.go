package quorum

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// fakeApply is a raft future answered when the test closes answer.
type fakeApply struct {
	answer chan struct{}
	err    error
	resp   interface{}
}

func newFakeApply(resp interface{}, err error) *fakeApply {
	return &fakeApply{answer: make(chan struct{}), resp: resp, err: err}
}

func (f *fakeApply) Error() error          { <-f.answer; return f.err }
func (f *fakeApply) Response() interface{} { return f.resp }
func (f *fakeApply) Index() uint64         { return 0 }

// completes waits for g's outcome, for at most 10 s.
func completes(t *testing.T, g Future) error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- g.Error() }()
	select {
	case err := <-got:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("a future never completed")
		return nil
	}
}

// The waiter delivers each raft future's outcome and response to the future it returned,
// a refusal included; its goroutine ends once nothing waits, and a later write starts
// it again.
func TestApplyWaiterDeliversOutcomes(t *testing.T) {
	var a applyWaiter
	refused := errors.New("refused")
	raw := []*fakeApply{newFakeApply(1, nil), newFakeApply(nil, refused), newFakeApply(3, nil)}
	var got []Future
	for _, f := range raw {
		got = append(got, a.wait(f))
	}
	// Answered out of order, the last first. (By design the waiter takes raft's futures
	// in the order queued, so nothing completes before the first is answered; this only
	// checks that an answer out of order is delivered.)
	for _, i := range []int{2, 0, 1} {
		close(raw[i].answer)
	}
	if err := completes(t, got[0]); err != nil || got[0].Response() != 1 {
		t.Errorf("first: %v, %v", err, got[0].Response())
	}
	if err := completes(t, got[1]); !errors.Is(err, refused) {
		t.Errorf("second: %v, want the refusal", err)
	}
	if err := completes(t, got[2]); err != nil || got[2].Response() != 3 {
		t.Errorf("third: %v, %v", err, got[2].Response())
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		a.mu.Lock()
		running := a.running
		a.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter's goroutine still runs with nothing to wait on")
		}
	}
	f := newFakeApply(4, nil)
	close(f.answer)
	if g := a.wait(f); completes(t, g) != nil || g.Response() != 4 {
		t.Errorf("after the waiter went idle: %v, %v", g.Error(), g.Response())
	}
}

// A backlog that the waiter drains while writes keep coming (its queue reused and
// grown) delivers every response to its own future.
func TestApplyWaiterBacklog(t *testing.T) {
	var a applyWaiter
	const n = 3000
	raw := make([]*fakeApply, n)
	got := make([]Future, n)
	for i := range n {
		raw[i] = newFakeApply(i, nil)
		got[i] = a.wait(raw[i])
		if i%3 == 2 { // answer two of every three as more come
			close(raw[i-2].answer)
			close(raw[i-1].answer)
		}
	}
	for i := range n {
		if i%3 == 2 {
			close(raw[i].answer)
		}
	}
	for i, g := range got {
		if err := completes(t, g); err != nil || g.Response() != i {
			t.Fatalf("write %d: %v, response %v", i, err, g.Response())
		}
	}
}

// Raft never answers a future left in its apply queue when it shuts down: stop fails
// every future still waiting, the one the goroutine waits on included, without a
// response, and every later one at once.
func TestApplyWaiterStop(t *testing.T) {
	var a applyWaiter
	never := []Future{a.wait(newFakeApply(1, nil)), a.wait(newFakeApply(2, nil))}
	a.stop(raft.ErrRaftShutdown)
	for i, g := range never {
		if err := completes(t, g); !errors.Is(err, raft.ErrRaftShutdown) || g.Response() != nil {
			t.Errorf("future %d after stop: %v, %v", i, err, g.Response())
		}
	}
	answered := newFakeApply(3, nil)
	close(answered.answer)
	if err := completes(t, a.wait(answered)); !errors.Is(err, raft.ErrRaftShutdown) {
		t.Errorf("a write after stop: %v", err)
	}
}
