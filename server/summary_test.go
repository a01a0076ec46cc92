package server

import (
	"math"
	"strings"
	"sync"
	"testing"
)

func metricValues(ms []metric) map[string]any {
	out := map[string]any{}
	for _, m := range ms {
		out[m.name] = m.value
	}
	return out
}

// A summary prints ZooKeeper's AvgMinMaxPercentileCounter values: zeros while empty, the
// average rounded to four decimals, and percentiles interpolated as Dropwizard's
// UniformSnapshot does over the sorted values, then rounded as Math.round.
func TestSummaryValuesAsZooKeeper(t *testing.T) {
	var s summary
	empty := metricValues(s.metrics("x", true))
	for k, v := range empty {
		if v != int64(0) && v != 0.0 {
			t.Errorf("empty %s = %v, want 0", k, v)
		}
	}
	if len(empty) != 9 {
		t.Errorf("%d values, want 9: %v", len(empty), empty)
	}
	for v := int64(1); v <= 10; v++ {
		s.record(v)
	}
	s.record(-3) // dropped, as ZooKeeper drops a negative latency
	// 10 values: the median is at position 5.5, halfway between 5 and 6 (5.5, rounded
	// to 6); the 95th at 10.45, past the last value (10).
	want := map[string]any{"avg_x": 5.5, "min_x": int64(1), "max_x": int64(10), "cnt_x": int64(10), "sum_x": int64(55),
		"p50_x": int64(6), "p95_x": int64(10), "p99_x": int64(10), "p999_x": int64(10)}
	got := metricValues(s.metrics("x", true))
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
	var thirds summary
	for _, v := range []int64{0, 0, 1} {
		thirds.record(v)
	}
	if a := thirds.avg(); a != 0.3333 {
		t.Errorf("avg of 0, 0, 1 = %v, want 0.3333", a)
	}
	// Position 0.5*4 = 2: between the second value (0) and the third (1), at 0.
	if q := thirds.quantile(0.5); q != 0 {
		t.Errorf("median of 0, 0, 1 = %v, want 0", q)
	}
	if q := thirds.quantile(0.6); math.Abs(q-0.4) > 1e-9 {
		t.Errorf("0.6-quantile of 0, 0, 1 = %v, want 0.4 (position 2.4)", q)
	}
	s.reset()
	for k, v := range metricValues(s.metrics("x", false)) {
		if v != int64(0) && v != 0.0 {
			t.Errorf("after reset %s = %v, want 0", k, v)
		}
	}
	if s.hist.Load() != nil {
		t.Error("reset kept the histogram")
	}
}

// Values below histExact have a bucket each; above, a bucket's least value is within
// 1/32 below every value it holds, and buckets are in order.
func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for _, v := range []int64{0, 1, 2, 1023, 1024, 1025, 1055, 1056, 4096, 5000, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		b := bucketOf(v)
		if b < prev || b >= histBuckets {
			t.Fatalf("bucket of %d is %d (previous %d, %d buckets)", v, b, prev, histBuckets)
		}
		prev = b
		least := valueOf(b)
		if v < histExact && least != v {
			t.Errorf("value %d in bucket %d, whose least value is %d", v, b, least)
		}
		if least > v || float64(v-least) > float64(v)/32 {
			t.Errorf("value %d in bucket %d, whose least value is %d", v, b, least)
		}
		if b+1 < histBuckets && valueOf(b+1) <= v {
			t.Errorf("value %d in bucket %d, but the next bucket starts at %d", v, b, valueOf(b+1))
		}
	}
}

// /metrics serves a summary as Prometheus' summary type, with the quantiles ZooKeeper's
// provider gives it.
func TestSummaryPrometheusForm(t *testing.T) {
	var s summary
	for _, v := range []int64{2, 4} {
		s.record(v)
	}
	got := string(s.writeProm(nil, "readlatency", "read request latency, ms", true))
	want := strings.Join([]string{"# HELP readlatency read request latency, ms", "# TYPE readlatency summary",
		`readlatency{quantile="0.5"} 3`, `readlatency{quantile="0.9"} 4`, `readlatency{quantile="0.99"} 4`,
		"readlatency_sum 6", "readlatency_count 2", ""}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if basic := string(s.writeProm(nil, "fsynctime", "h", false)); strings.Contains(basic, "0.9") || !strings.Contains(basic, `fsynctime{quantile="0.5"} 3`) {
		t.Errorf("a basic summary:\n%s", basic)
	}
	var empty summary
	if got := string(empty.writeProm(nil, "snapshottime", "h", false)); !strings.Contains(got, `snapshottime{quantile="0.5"} NaN`+"\n") {
		t.Errorf("an empty summary's quantile, as Prometheus' client prints it:\n%s", got)
	}
}

// Above histExact a percentile is its bucket's middle, kept within the least and the
// greatest value recorded: three values of 2000 give 2000, not their bucket's start.
func TestSummaryLargeValues(t *testing.T) {
	var s summary
	for range 3 {
		s.record(2000)
	}
	if q := s.quantile(0.5); q != 2000 {
		t.Errorf("median of three 2000s: %v", q)
	}
	var spread summary
	for _, v := range []int64{1000, 5000, 9000} {
		spread.record(v)
	}
	if q := spread.quantile(0.5); math.Abs(q-5000) > 5000.0/32 {
		t.Errorf("median of 1000, 5000, 9000: %v, want within 1/32 of 5000", q)
	}
	// 4220 and 4221 share the bucket 4096-4223: its middle (4160) stands for them, within
	// half the bucket's width of the true median (4220.5); its start would be twice as far.
	var oneBucket summary
	for _, v := range []int64{4100, 4220, 4221, 4222} {
		oneBucket.record(v)
	}
	if q := oneBucket.quantile(0.5); math.Abs(q-4220.5) > 64 {
		t.Errorf("median of 4100, 4220, 4221, 4222: %v, want within 64 of 4220.5", q)
	}
}

// srst may reset a summary while requests record in it: nothing is lost but what the
// reset drops, and nothing panics (run with -race).
func TestSummaryRecordWhileReset(t *testing.T) {
	var s summary
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				s.record(i % 2000)
			}
		}()
	}
	var resets sync.WaitGroup
	for range 2 {
		resets.Add(1)
		go func() {
			defer resets.Done()
			for range 20000 {
				s.reset()
			}
		}()
	}
	resets.Wait()
	s.quantile(0.99)
	close(stop)
	wg.Wait()
	s.reset()
	s.record(7)
	if got := metricValues(s.metrics("x", true)); got["cnt_x"] != int64(1) || got["p50_x"] != int64(7) {
		t.Errorf("after the last reset and one value: %v", got)
	}
}
