package main

import (
	"math/bits"
	"time"
)

// histogram records latencies in log-linear buckets, as HdrHistogram does: each power of two
// is split into subBuckets equal parts, so any recorded value is known within 1/subBuckets
// (about 1.6%) and memory is fixed (histBuckets counters) however long a run lasts. One
// histogram belongs to one goroutine; merge them afterwards.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    time.Duration
	max    time.Duration
}

const (
	subBits     = 6
	subBuckets  = 1 << subBits
	maxExponent = 40 // 2^40 ns is about 18 minutes: nothing a benchmark waits for
	histBuckets = (maxExponent - subBits + 2) * subBuckets
)

func bucketOf(ns uint64) int {
	if ns < subBuckets {
		return int(ns)
	}
	if ns >= 1<<maxExponent {
		ns = 1<<maxExponent - 1
	}
	// Keep the top subBits+1 bits: the leading one and subBits bits below it.
	shift := bits.Len64(ns) - subBits - 1
	return (shift+1)*subBuckets + int(ns>>shift) - subBuckets
}

// bucketHigh is the largest value that falls in bucket i; percentiles report it, so they
// err on the slow side, never the fast one.
func bucketHigh(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	mant := uint64(i%subBuckets + subBuckets)
	return (mant+1)<<shift - 1
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
	h.sum += d
	h.max = max(h.max, d)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	h.max = max(h.max, o.max)
}

// quantile returns the latency below which a fraction q of the samples fall.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.5)
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketHigh(i)), h.max)
		}
	}
	return h.max
}

// over counts the samples above d, give or take the bucket d falls in: the samples of
// that bucket count when its top is above d, so the count errs on the high side.
func (h *histogram) over(d time.Duration) uint64 {
	var n uint64
	for i := bucketOf(uint64(max(d, 0))); i < len(h.counts); i++ {
		if bucketHigh(i) > uint64(d) {
			n += h.counts[i]
		}
	}
	return n
}

func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}
