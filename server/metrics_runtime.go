package server

import (
	"fmt"
	"math"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
)

// The Go runtime's own figures on /metrics: the live heap as of the last collection
// (go_heap_live_bytes, /gc/heap/live:bytes), the collections so far
// (go_gc_cycles_total) and the stop-the-world pauses of the collector as a Prometheus
// histogram (go_gc_pause_seconds, from /sched/pauses/total/gc:seconds), which a scraper
// diffs over a window for its pause quantiles, and the part of each pause spent getting
// every thread to stop (go_gc_pause_stopping_seconds, /sched/pauses/stopping/gc:seconds):
// on a machine with more runnable threads than cores, that wait is most of a pause.
const (
	metricLiveHeap   = "/gc/heap/live:bytes"
	metricGCCycles   = "/gc/cycles/total:gc-cycles"
	metricGCPauses   = "/sched/pauses/total/gc:seconds"
	metricGCStopping = "/sched/pauses/stopping/gc:seconds"
)

// gcPauseBounds are go_gc_pause_seconds' bucket upper bounds: 1, 1.5, 2, 3, 5 and 7
// times each power of ten from 1 µs to 10 s, fine enough to tell a pause p99 under 1 ms
// from one over it. The runtime's own buckets are finer; each of its counts goes to the
// first bound at or above its bucket's upper edge, so quantiles err on the slow side.
var gcPauseBounds = func() []float64 {
	var out []float64
	for exp := -6; exp <= 0; exp++ {
		for _, m := range []float64{1, 1.5, 2, 3, 5, 7} {
			out = append(out, m*math.Pow10(exp))
		}
	}
	return append(out, 10)
}()

// coarsen folds a runtime histogram (counts[i] in [edges[i], edges[i+1])) into
// cumulative counts at bounds (the last entry: +Inf, everything).
func coarsen(counts []uint64, edges, bounds []float64) []uint64 {
	out := make([]uint64, len(bounds)+1)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		j := len(bounds) // +Inf
		for k, b := range bounds {
			if edges[i+1] <= b {
				j = k
				break
			}
		}
		out[j] += c
	}
	for j := 1; j < len(out); j++ {
		out[j] += out[j-1]
	}
	return out
}

func writeRuntimeMetrics(b *strings.Builder) {
	samples := []metrics.Sample{{Name: metricLiveHeap}, {Name: metricGCCycles}, {Name: metricGCPauses}, {Name: metricGCStopping}}
	metrics.Read(samples)
	if s := samples[0]; s.Value.Kind() == metrics.KindUint64 {
		fmt.Fprintf(b, "# HELP go_heap_live_bytes heap bytes live at the end of the last collection\n# TYPE go_heap_live_bytes gauge\ngo_heap_live_bytes %d\n", s.Value.Uint64())
	}
	if s := samples[1]; s.Value.Kind() == metrics.KindUint64 {
		fmt.Fprintf(b, "# HELP go_gc_cycles_total completed garbage collections\n# TYPE go_gc_cycles_total counter\ngo_gc_cycles_total %d\n", s.Value.Uint64())
	}
	writePauseHistogram(b, samples[2], "go_gc_pause_seconds", "the collector's stop-the-world pauses")
	writePauseHistogram(b, samples[3], "go_gc_pause_stopping_seconds", "the part of each of the collector's pauses spent stopping the threads")
}

func writePauseHistogram(b *strings.Builder, s metrics.Sample, name, help string) {
	if s.Value.Kind() != metrics.KindFloat64Histogram {
		return
	}
	h := s.Value.Float64Histogram()
	cum := coarsen(h.Counts, h.Buckets, gcPauseBounds)
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name)
	for i, le := range gcPauseBounds {
		fmt.Fprintf(b, "%s_bucket{le=\"%s\"} %d\n", name, strconv.FormatFloat(le, 'g', -1, 64), cum[i])
	}
	total := cum[len(cum)-1]
	fmt.Fprintf(b, "%s_bucket{le=\"+Inf\"} %d\n%s_count %d\n", name, total, name, total)
}

// serveDebugGC runs a full collection and answers with the live heap after it. It is
// served (POST /debug/gc on the metrics listener) only with zkraft.debug.gcEndpoint set,
// for benchmarks that read go_heap_live_bytes right after filling a tree.
func serveDebugGC(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	runtime.GC()
	s := []metrics.Sample{{Name: metricLiveHeap}}
	metrics.Read(s)
	fmt.Fprintf(w, "%d\n", s[0].Value.Uint64())
}
