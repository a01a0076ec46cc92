package server

import (
	"math"
	"math/bits"
	"strconv"
	"sync/atomic"
)

// summary is one of ZooKeeper's summary metrics (AvgMinMaxCounter, and with percentiles
// AvgMinMaxPercentileCounter): the count, sum, least and greatest of the whole values
// recorded since the start or the last srst. mntr prints them as avg_, min_, max_, cnt_
// and sum_ (and p50_, p95_, p99_, p999_) of the name; /metrics as a Prometheus summary.
//
// Percentiles come from a histogram of every value (not ZooKeeper's sample of 4,096,
// which holds every value until there are more): exact up to histExact, within 1/32
// above. They are interpolated between neighbours as ZooKeeper's (Dropwizard's
// UniformSnapshot) are. The histogram is allocated at the first value, so a summary
// nothing was recorded in costs a few words.
type summary struct {
	count, sum atomic.Int64
	// min and max hold the value plus one; 0 is none yet (printed as 0, as ZooKeeper's).
	min, max atomic.Int64
	hist     atomic.Pointer[histogram]
	// plain summaries keep no histogram: nothing asks their percentiles.
	plain bool
}

// record adds one value; negative ones are dropped (ZooKeeper's latencies skip them).
func (s *summary) record(v int64) {
	if v < 0 {
		return
	}
	s.count.Add(1)
	s.sum.Add(v)
	lowerTo(&s.min, v+1)
	raiseTo(&s.max, v+1)
	if s.plain {
		return
	}
	h := s.hist.Load()
	if h == nil {
		// The one allocated here, or the one another record put first; a reset may
		// drop either at once, which only loses this value from the percentiles.
		n := new(histogram)
		if !s.hist.CompareAndSwap(nil, n) {
			if h = s.hist.Load(); h == nil {
				h = n
			}
		} else {
			h = n
		}
	}
	h.buckets[bucketOf(v)].Add(1)
}

// reset forgets every value (srst).
func (s *summary) reset() {
	s.count.Store(0)
	s.sum.Store(0)
	s.min.Store(0)
	s.max.Store(0)
	s.hist.Store(nil)
}

// avg is the mean rounded half up to four decimals, as AvgMinMaxCounter.getAvg.
func (s *summary) avg() float64 {
	n, sum := s.count.Load(), s.sum.Load()
	if n == 0 {
		return 0
	}
	return roundHalfUp4(float64(sum) / float64(n))
}

func (s *summary) least() int64    { return max(s.min.Load()-1, 0) }
func (s *summary) greatest() int64 { return max(s.max.Load()-1, 0) }

// metrics are mntr's values of the summary named name: avg_, min_, max_, cnt_, sum_ and,
// with percentiles, p50_, p95_, p99_, p999_ (AvgMinMaxPercentileCounter.values' order).
func (s *summary) metrics(name string, percentiles bool) []metric {
	out := []metric{{"avg_" + name, s.avg()}, {"min_" + name, s.least()}, {"max_" + name, s.greatest()},
		{"cnt_" + name, s.count.Load()}, {"sum_" + name, s.sum.Load()}}
	if percentiles {
		for _, p := range mntrPercentiles {
			out = append(out, metric{p.prefix + name, int64(math.Floor(s.quantile(p.q) + 0.5))})
		}
	}
	return out
}

// mntrPercentiles are the percentiles mntr prints of a summary that has them.
var mntrPercentiles = []struct {
	prefix string
	q      float64
}{{"p50_", 0.5}, {"p95_", 0.95}, {"p99_", 0.99}, {"p999_", 0.999}}

// quantile is the q-quantile of the values recorded, as Dropwizard's UniformSnapshot
// interpolates it over the sorted values: position q*(n+1), between the value before
// it and the value at it; 0 without values. A value above histExact stands for its
// bucket's middle, kept within the least and greatest value recorded.
func (s *summary) quantile(q float64) float64 {
	h := s.hist.Load()
	if h == nil || s.count.Load() == 0 {
		return 0
	}
	return min(max(s.rawQuantile(h, q), float64(s.least())), float64(s.greatest()))
}

func (s *summary) rawQuantile(h *histogram, q float64) float64 {
	counts := make([]int64, len(h.buckets))
	var n int64
	for i := range h.buckets {
		counts[i] = h.buckets[i].Load()
		n += counts[i]
	}
	if n == 0 {
		return 0
	}
	pos := q * float64(n+1)
	idx := int64(pos)
	switch {
	case idx < 1:
		return float64(nth(counts, 0))
	case idx >= n:
		return float64(nth(counts, n-1))
	}
	lower, upper := float64(nth(counts, idx-1)), float64(nth(counts, idx))
	return lower + (pos-math.Floor(pos))*(upper-lower)
}

// nth is the value at index k (from 0) of the sorted values the counts hold: exact below
// histExact, its bucket's middle above.
func nth(counts []int64, k int64) int64 {
	i := len(counts) - 1
	for j, c := range counts {
		if k < c {
			i = j
			break
		}
		k -= c
	}
	if i < histExact {
		return int64(i)
	}
	least := valueOf(i)
	width := int64(1) << (bits.Len64(uint64(least)) - 1 - histSubBits)
	return least + width/2
}

// The histogram: one bucket per value below histExact, then histSub buckets per power
// of two up to the greatest int64 (whose highest set bit is bit 62), each holding the
// values from its lower bound up to the next bucket's.
const (
	histExact     = 1 << histExactBits
	histExactBits = 10
	histSubBits   = 5
	histSub       = 1 << histSubBits
	histBuckets   = histExact + (63-histExactBits)*histSub
)

type histogram struct{ buckets [histBuckets]atomic.Int64 }

// bucketOf is the bucket of a non-negative v.
func bucketOf(v int64) int {
	if v < histExact {
		return int(v)
	}
	octave := bits.Len64(uint64(v)) - 1 // >= histExactBits
	sub := int(uint64(v)>>(octave-histSubBits)) & (histSub - 1)
	return histExact + (octave-histExactBits)*histSub + sub
}

// valueOf is the least value of bucket i.
func valueOf(i int) int64 {
	if i < histExact {
		return int64(i)
	}
	i -= histExact
	octave, sub := i/histSub+histExactBits, i%histSub
	return int64(1)<<octave | int64(sub)<<(octave-histSubBits)
}

// writeProm writes the summary as a Prometheus summary named name, with the quantiles
// ZooKeeper's PrometheusMetricsProvider gives it (0.5, and 0.9 and 0.99 for the
// summaries mntr prints percentiles of), computed over every value since the start or
// the last srst (ZooKeeper's over a sliding ten minutes).
func (s *summary) writeProm(b []byte, name, help string, percentiles bool) []byte {
	b = append(b, "# HELP "+name+" "+help+"\n# TYPE "+name+" summary\n"...)
	qs := []float64{0.5}
	if percentiles {
		qs = append(qs, 0.9, 0.99)
	}
	empty := s.count.Load() == 0
	for _, q := range qs {
		b = append(b, name+`{quantile="`...)
		b = strconv.AppendFloat(b, q, 'g', -1, 64)
		b = append(b, `"} `...)
		if empty {
			b = append(b, "NaN"...) // as Prometheus' client prints a quantile of nothing
		} else {
			b = strconv.AppendFloat(b, s.quantile(q), 'g', -1, 64)
		}
		b = append(b, '\n')
	}
	b = append(b, name+"_sum "...)
	b = strconv.AppendInt(b, s.sum.Load(), 10)
	b = append(b, "\n"+name+"_count "...)
	b = strconv.AppendInt(b, s.count.Load(), 10)
	return append(b, '\n')
}
