package main

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// promSamples reads Prometheus' text format into series -> value, the series as written
// (name, or name{labels}); comments and lines that do not parse are skipped.
func promSamples(text string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[strings.TrimSpace(line[:i])] = v
	}
	return out
}

// promBucket is one cumulative bucket of a Prometheus histogram.
type promBucket struct {
	le    float64 // upper bound; +Inf for the last
	count uint64  // samples at or below le
}

// promHistogram returns the buckets of histogram name, by le ascending.
func promHistogram(samples map[string]float64, name string) ([]promBucket, error) {
	prefix := name + `_bucket{le="`
	var out []promBucket
	for series, v := range samples {
		rest, ok := strings.CutPrefix(series, prefix)
		if !ok {
			continue
		}
		le, ok := strings.CutSuffix(rest, `"}`)
		if !ok {
			return nil, fmt.Errorf("%s: bad bucket %q", name, series)
		}
		bound, err := strconv.ParseFloat(le, 64) // ParseFloat reads "+Inf"
		if err != nil {
			return nil, fmt.Errorf("%s: bad le in %q", name, series)
		}
		out = append(out, promBucket{le: bound, count: uint64(v)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no histogram %s", name)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].le < out[j].le })
	return out, nil
}

// histDelta is after - before bucket by bucket (the same bounds on both: one process).
func histDelta(before, after []promBucket) ([]promBucket, error) {
	if len(before) == 0 {
		return after, nil
	}
	if len(before) != len(after) {
		return nil, fmt.Errorf("histogram changed its buckets: %d then %d", len(before), len(after))
	}
	out := make([]promBucket, len(after))
	for i := range after {
		if before[i].le != after[i].le || before[i].count > after[i].count {
			return nil, fmt.Errorf("histogram bucket %d: %v then %v", i, before[i], after[i])
		}
		out[i] = promBucket{le: after[i].le, count: after[i].count - before[i].count}
	}
	return out, nil
}

// bucketQuantile is the upper bound of the bucket holding the q-th sample of cumulative
// buckets (so it errs on the slow side), the largest finite bound if that sample is
// beyond it, and 0 with no samples.
func bucketQuantile(bs []promBucket, q float64) (time.Duration, uint64) {
	if len(bs) == 0 {
		return 0, 0
	}
	total := bs[len(bs)-1].count
	if total == 0 {
		return 0, 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	rank = min(max(rank, 1), total)
	lastFinite := 0.0
	for _, b := range bs {
		if !math.IsInf(b.le, 1) {
			lastFinite = b.le
		}
		if b.count >= rank {
			if math.IsInf(b.le, 1) {
				break
			}
			return seconds(b.le), total
		}
	}
	return seconds(lastFinite), total
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
