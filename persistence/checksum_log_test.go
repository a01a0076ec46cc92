package persistence

import (
	"testing"

	"github.com/hashicorp/raft"
)

// recordingLog is a log store that records the ranges deleted, in order.
type recordingLog struct {
	raft.LogStore
	first   uint64
	deleted [][2]uint64
}

func (r *recordingLog) FirstIndex() (uint64, error) { return r.first, nil }

func (r *recordingLog) DeleteRange(lo, hi uint64) error {
	r.deleted = append(r.deleted, [2]uint64{lo, hi})
	return nil
}

// A large DeleteRange is split into transactions of deleteChunk entries, in an order that
// keeps the log contiguous after each: a prefix oldest first, a suffix newest first.
func TestDeleteRangeInChunks(t *testing.T) {
	cases := []struct {
		name     string
		first    uint64
		from, to uint64
		want     [][2]uint64
	}{
		{"prefix", 1, 1, 5000, [][2]uint64{{1, 2048}, {2049, 4096}, {4097, 5000}}},
		{"suffix", 1, 3000, 8000, [][2]uint64{{5953, 8000}, {3905, 5952}, {3000, 3904}}},
		{"small suffix", 1, 10, 12, [][2]uint64{{10, 12}}},
		{"one chunk", 7, 7, 2054, [][2]uint64{{7, 2054}}},
		{"empty", 1, 5, 4, nil},
	}
	for _, c := range cases {
		rec := &recordingLog{first: c.first}
		if err := (&checksumLog{inner: rec}).DeleteRange(c.from, c.to); err != nil {
			t.Fatal(err)
		}
		if len(rec.deleted) != len(c.want) {
			t.Fatalf("%s: deleted %v, want %v", c.name, rec.deleted, c.want)
		}
		for i := range c.want {
			if rec.deleted[i] != c.want[i] {
				t.Fatalf("%s: deleted %v, want %v", c.name, rec.deleted, c.want)
			}
		}
	}
}
