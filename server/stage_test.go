package server

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// A stage runs what is queued in order, one at a time, on a goroutine that ends when the
// queue runs dry and starts again with the next put.
func TestStageRunsInOrderAndEndsWhenIdle(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	var (
		mu      sync.Mutex
		got     []int32
		running int
		most    int
	)
	release := make(chan struct{})
	s := newStage(1000, done, func(p *pending) bool {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		if p.xid == 0 {
			<-release // the first holds the stage while the rest queue up
		}
		mu.Lock()
		got = append(got, p.xid)
		running--
		mu.Unlock()
		return true
	})
	before := runtime.NumGoroutine()
	for i := range int32(100) {
		if !s.put(&pending{xid: i}) {
			t.Fatal("put refused on an open connection")
		}
	}
	close(release)
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 100 })
	for i, x := range got {
		if x != int32(i) {
			t.Fatalf("ran %d at place %d: %v", x, i, got)
		}
	}
	if most != 1 {
		t.Fatalf("%d requests ran at once, want 1", most)
	}
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before })
	s.mu.Lock()
	idle, left := !s.running, len(s.queue)-s.head
	s.mu.Unlock()
	if !idle || left != 0 {
		t.Fatalf("after the last request: running %v, %d queued", !idle, left)
	}
	// The next put starts a goroutine again.
	if !s.put(&pending{xid: 100}) {
		t.Fatal("put refused")
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 101 })
}

// put waits while max requests wait, and gives up when the connection closes.
func TestStagePutWaitsForRoom(t *testing.T) {
	done := make(chan struct{})
	release := make(chan struct{})
	ran := make(chan int32, 10)
	s := newStage(2, done, func(p *pending) bool {
		<-release
		ran <- p.xid
		return true
	})
	s.put(&pending{xid: 0}) // taken by the goroutine, which waits on release
	waitFor(t, func() bool { s.mu.Lock(); defer s.mu.Unlock(); return s.head == 1 })
	s.put(&pending{xid: 1})
	s.put(&pending{xid: 2}) // two wait now: the stage is full
	third := make(chan bool)
	go func() { third <- s.put(&pending{xid: 3}) }()
	select {
	case <-third:
		t.Fatal("put did not wait with max requests waiting")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if !<-third {
		t.Fatal("put refused after room was made")
	}
	for want := range int32(4) {
		if got := <-ran; got != want {
			t.Fatalf("ran %d, want %d", got, want)
		}
	}

	// A limit of 0 still takes one request at a time (it does not wait forever).
	ran0 := make(chan struct{}, 2)
	s0 := newStage(0, done, func(*pending) bool { ran0 <- struct{}{}; return true })
	for range 2 {
		put := make(chan bool)
		go func() { put <- s0.put(&pending{}) }()
		select {
		case ok := <-put:
			if !ok {
				t.Fatal("put refused on a stage of limit 0")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("put on a stage of limit 0 waited 5 s")
		}
	}
	for range 2 {
		<-ran0
	}

	// A full stage whose connection closes refuses the waiting put.
	block := make(chan struct{})
	s2 := newStage(1, done, func(*pending) bool { <-block; return true })
	s2.put(&pending{})
	waitFor(t, func() bool { s2.mu.Lock(); defer s2.mu.Unlock(); return s2.head == 1 })
	s2.put(&pending{})
	refused := make(chan bool)
	go func() { refused <- s2.put(&pending{}) }()
	close(done)
	if <-refused {
		t.Fatal("put on a full stage of a closed connection was accepted")
	}
	close(block)
}

// Once run reports the connection done, or the connection closes, nothing more runs, and
// later puts start no goroutine.
func TestStageStopsForGood(t *testing.T) {
	done := make(chan struct{})
	defer close(done)
	var mu sync.Mutex
	var got []int32
	s := newStage(100, done, func(p *pending) bool {
		mu.Lock()
		got = append(got, p.xid)
		mu.Unlock()
		return p.xid != 1
	})
	for i := range int32(3) {
		s.put(&pending{xid: i})
	}
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	s.put(&pending{xid: 9})
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("ran %v after the stage stopped at 1, want [0 1]", got)
	}
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(time.Millisecond)
	}
}
