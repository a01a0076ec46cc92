package quorum

import (
	"errors"
	"testing"
	"time"
)

// fakeApply is a raft future answered when the test closes answer.
type fakeApply struct {
	answer chan struct{}
	err    error
	resp   interface{}
}

func (f *fakeApply) Error() error          { <-f.answer; return f.err }
func (f *fakeApply) Response() interface{} { return f.resp }
func (f *fakeApply) Index() uint64         { return 0 }

// The waiter delivers each raft future's outcome and response to the future it returned,
// a refusal included, and leaves no future waiting behind one that answered later; its
// goroutine ends once nothing waits.
func TestApplyWaiterDeliversOutcomes(t *testing.T) {
	var a applyWaiter
	refused := errors.New("refused")
	raw := []*fakeApply{
		{answer: make(chan struct{}), resp: 1},
		{answer: make(chan struct{}), err: refused},
		{answer: make(chan struct{}), resp: 3},
	}
	var got []Future
	for _, f := range raw {
		got = append(got, a.wait(f))
	}
	done := make(chan int, len(got))
	for i, g := range got {
		go func() { g.Error(); done <- i }()
	}
	// Answered out of order: the last first. Nothing completes before the first answers,
	// as the waiter takes raft's futures in the order they were proposed.
	close(raw[2].answer)
	select {
	case i := <-done:
		t.Fatalf("future %d completed before the first was answered", i)
	case <-time.After(50 * time.Millisecond):
	}
	close(raw[0].answer)
	close(raw[1].answer)
	for range got {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("a future never completed")
		}
	}
	if err := got[0].Error(); err != nil || got[0].Response() != 1 {
		t.Errorf("first: %v, %v", err, got[0].Response())
	}
	if err := got[1].Error(); !errors.Is(err, refused) {
		t.Errorf("second: %v, want the refusal", err)
	}
	if err := got[2].Error(); err != nil || got[2].Response() != 3 {
		t.Errorf("third: %v, %v", err, got[2].Response())
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.mu.Lock()
		running := a.running
		a.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiter's goroutine still runs with nothing to wait on")
		}
		time.Sleep(time.Millisecond)
	}
	// A later write starts it again.
	f := &fakeApply{answer: make(chan struct{}), resp: 4}
	close(f.answer)
	if g := a.wait(f); g.Error() != nil || g.Response() != 4 {
		t.Errorf("after the waiter went idle: %v, %v", g.Error(), g.Response())
	}
}
