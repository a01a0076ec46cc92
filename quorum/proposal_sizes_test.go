package quorum

import (
	"sync"
	"testing"
)

// ZooKeeper's BufferStats: -1 for all three until the first proposal, then the last
// size, the smallest and the largest; reset starts again from -1.
func TestProposalSizesFollowBufferStats(t *testing.T) {
	p := newProposalSizes()
	if got := p.get(); got != (ProposalSizes{-1, -1, -1}) {
		t.Fatalf("before any proposal %+v, want -1/-1/-1", got)
	}
	for _, c := range []struct {
		size int64
		want ProposalSizes
	}{
		{40, ProposalSizes{40, 40, 40}},
		{100, ProposalSizes{100, 40, 100}},
		{20, ProposalSizes{20, 20, 100}},
		{60, ProposalSizes{60, 20, 100}},
	} {
		p.observe(c.size)
		if got := p.get(); got != c.want {
			t.Fatalf("after %d: %+v, want %+v", c.size, got, c.want)
		}
	}
	p.reset()
	if got := p.get(); got != (ProposalSizes{-1, -1, -1}) {
		t.Fatalf("after reset %+v, want -1/-1/-1", got)
	}
}

// Proposals come from many goroutines (connections, peer streams, duties) without a
// lock: min and max must still be the extremes of all of them.
func TestProposalSizesFromManyWriters(t *testing.T) {
	p := newProposalSizes()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := int64(0); i < 1000; i++ {
				p.observe(10 + (i*7+int64(g)*13)%1000)
			}
		}(g)
	}
	wg.Wait()
	if got := p.get(); got.Min != 10 || got.Max != 1009 || got.Last < 10 || got.Last > 1009 {
		t.Fatalf("%+v, want min 10, max 1009, last between them", got)
	}
}
