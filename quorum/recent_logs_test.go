package quorum

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/hashicorp/raft"
)

// countingStore counts the reads that reach the store behind the cache.
type countingStore struct {
	*raft.InmemStore
	reads int
}

func (s *countingStore) GetLog(i uint64, out *raft.Log) error {
	s.reads++
	return s.InmemStore.GetLog(i, out)
}

func logOf(i uint64, size int) *raft.Log {
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, size)}
}

// The cache keeps the newest entries within both bounds, serves them without the
// store, and reads everything else through.
func TestRecentLogsBounds(t *testing.T) {
	store := &countingStore{InmemStore: raft.NewInmemStore()}
	c := newRecentLogs(store, 8, 1000)
	for i := uint64(1); i <= 20; i++ {
		if err := c.StoreLog(logOf(i, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if c.first != 13 || c.last != 20 || c.bytes != 800 {
		t.Fatalf("by count: cached %d..%d, %d bytes; want 13..20, 800", c.first, c.last, c.bytes)
	}
	// Larger entries: the byte bound keeps fewer.
	if err := c.StoreLogs([]*raft.Log{logOf(21, 400), logOf(22, 400)}); err != nil {
		t.Fatal(err)
	}
	if c.first != 19 || c.last != 22 || c.bytes != 1000 {
		t.Fatalf("by bytes: cached %d..%d, %d bytes; want 19..22, 1000", c.first, c.last, c.bytes)
	}
	// One entry above the bound is still kept, alone.
	if err := c.StoreLog(logOf(23, 5000)); err != nil {
		t.Fatal(err)
	}
	if c.first != 23 || c.last != 23 || c.bytes != 5000 {
		t.Fatalf("a large entry: cached %d..%d, %d bytes", c.first, c.last, c.bytes)
	}
	store.reads = 0
	var l raft.Log
	if err := c.GetLog(23, &l); err != nil || len(l.Data) != 5000 || store.reads != 0 {
		t.Fatalf("cached read: %v, %d bytes, %d store reads", err, len(l.Data), store.reads)
	}
	if err := c.GetLog(5, &l); err != nil || l.Index != 5 || store.reads != 1 {
		t.Fatalf("older read: %v, index %d, %d store reads", err, l.Index, store.reads)
	}
	// A suffix raft deletes (a new leader replaces it) is gone from the cache too.
	if err := c.DeleteRange(23, 23); err != nil {
		t.Fatal(err)
	}
	if err := c.GetLog(23, &l); err == nil {
		t.Fatal("a deleted entry is still read through the cache")
	}
}

// Whatever raft does to the log (appends, a suffix replaced, a prefix compacted, a
// batch that does not follow), every read through the cache gives what the store holds.
func TestRecentLogsMatchTheStore(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	store := raft.NewInmemStore()
	c := newRecentLogs(store, 16, 4096)
	next := uint64(1)
	term := uint64(1)
	for round := 0; round < 2000; round++ {
		switch r := rng.Intn(20); {
		case r == 0 && next > 5: // a new leader replaces a suffix
			from := next - uint64(rng.Intn(4)) - 1
			if err := c.DeleteRange(from, next-1); err != nil {
				t.Fatal(err)
			}
			next, term = from, term+1
		case r == 1 && next > 40: // compaction
			first, _ := c.FirstIndex()
			if err := c.DeleteRange(first, first+10); err != nil {
				t.Fatal(err)
			}
		case r == 2: // a snapshot installed: a gap
			next += uint64(rng.Intn(50) + 1)
		default:
			var es []*raft.Log
			for k := rng.Intn(5) + 1; k > 0; k-- {
				e := logOf(next, rng.Intn(900))
				e.Term = term
				es = append(es, e)
				next++
			}
			if err := c.StoreLogs(es); err != nil {
				t.Fatal(err)
			}
		}
		if c.first < c.last && c.bytes > 4096 {
			t.Fatalf("round %d: %d bytes cached over %d..%d", round, c.bytes, c.first, c.last)
		}
		sum := 0
		for i := c.first; i <= c.last; i++ {
			sum += logBytes(c.ring[i%uint64(len(c.ring))])
		}
		if sum != c.bytes {
			t.Fatalf("round %d: counted %d bytes, holds %d", round, c.bytes, sum)
		}
		for i := next - min(next-1, 30); i < next; i++ {
			var want, got raft.Log
			werr := store.GetLog(i, &want)
			gerr := c.GetLog(i, &got)
			if (werr == nil) != (gerr == nil) || want.Term != got.Term || !bytes.Equal(want.Data, got.Data) {
				t.Fatalf("round %d, entry %d: cache gave (%v, term %d), store (%v, term %d)", round, i, gerr, got.Term, werr, want.Term)
			}
		}
	}
}

type monotonicStore struct{ *raft.InmemStore }

func (monotonicStore) IsMonotonic() bool { return true }

// raft must still see the transaction log as monotonic through what it holds: the
// noticed-batch store in front of the cache.
func TestRecentLogsPassesMonotonicOn(t *testing.T) {
	monotonic := func(store raft.LogStore) bool {
		var held raft.LogStore = &noticedLogs{recentLogs: newRecentLogs(store, 4, 100)}
		m, ok := held.(raft.MonotonicLogStore)
		return ok && m.IsMonotonic()
	}
	if !monotonic(monotonicStore{raft.NewInmemStore()}) {
		t.Fatal("a monotonic store is not monotonic through the cache")
	}
	if monotonic(raft.NewInmemStore()) {
		t.Fatal("a plain store became monotonic")
	}
}
