package main

import (
	"math"
	"testing"
	"time"
)

func TestHeapInfoUsed(t *testing.T) {
	out := `12345:
 garbage-first heap   total 4194304K, used 450123K [0x0000000700000000, 0x0000000800000000)
  region size 2048K, 3 young (6144K), 0 survivors (0K)
 Metaspace       used 21345K, committed 21760K, reserved 1114112K
  class space    used 2345K, committed 2496K, reserved 1048576K
`
	got, err := heapInfoUsed(out)
	if err != nil || got != 450123*1024 {
		t.Fatalf("heapInfoUsed = %d, %v; want %d", got, err, 450123*1024)
	}
	if _, err := heapInfoUsed("12345:\n Metaspace       used 21345K, committed 21760K\n"); err == nil {
		t.Fatal("Metaspace alone read as the heap")
	}
	if _, err := heapInfoUsed("12345:\nCould not attach\n"); err == nil {
		t.Fatal("an error message read as a heap size")
	}
	if n, err := parseJVMSize("3G"); err != nil || n != 3<<30 {
		t.Fatalf("parseJVMSize(3G) = %d, %v", n, err)
	}
}

func TestGCLogPauses(t *testing.T) {
	log := `[0.005s][info][gc] Using G1
[1.234s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 3.456ms
[1.500s][info][gc] GC(1) Pause Young (Concurrent Start) (G1 Humongous Allocation) 100M->90M(256M) 12.000ms
[1.600s][info][gc] GC(2) Concurrent Mark Cycle 34.567ms
[1.700s][info][gc] GC(2) Pause Remark 95M->95M(256M) 0.800ms
[1.800s][info][gc] GC(2) Pause Cleanup 95M->95M(256M) 0.010ms
[2.000s][info][gc] GC(3) Pause Full (System.gc()) 100M->50M(256M) 123.456ms
[2.100s][info][gc,start] GC(4) Pause Young (Normal) (G1 Evacuation Pause)
`
	got := gcLogPauses(log)
	want := []time.Duration{3456 * time.Microsecond, 12 * time.Millisecond, 800 * time.Microsecond, 10 * time.Microsecond, 123456 * time.Microsecond}
	if len(got) != len(want) {
		t.Fatalf("pauses = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pause %d = %v, want %v", i, got[i], want[i])
		}
	}
	if q := durationQuantile(got, 0.99); q != 123456*time.Microsecond {
		t.Fatalf("p99 = %v", q)
	}
	if q := durationQuantile(got, 0.5); q != 3456*time.Microsecond {
		t.Fatalf("p50 = %v", q)
	}
	if q := durationQuantile(nil, 0.99); q != 0 {
		t.Fatalf("p99 of none = %v", q)
	}
}

const promText = `# HELP go_heap_live_bytes heap bytes live at the end of the last collection
# TYPE go_heap_live_bytes gauge
go_heap_live_bytes 1.2345e+06
# TYPE go_gc_pause_seconds histogram
go_gc_pause_seconds_bucket{le="0.0001"} 10
go_gc_pause_seconds_bucket{le="0.0005"} 90
go_gc_pause_seconds_bucket{le="0.001"} 99
go_gc_pause_seconds_bucket{le="0.01"} 100
go_gc_pause_seconds_bucket{le="+Inf"} 100
go_gc_pause_seconds_count 100
connections_closed_total{reason="idle"} 3
`

func TestPromHistogramQuantile(t *testing.T) {
	s := promSamples(promText)
	if s["go_heap_live_bytes"] != 1234500 || s[`connections_closed_total{reason="idle"}`] != 3 {
		t.Fatalf("samples = %v", s)
	}
	bs, err := promHistogram(s, "go_gc_pause_seconds")
	if err != nil || len(bs) != 5 || !math.IsInf(bs[4].le, 1) {
		t.Fatalf("buckets = %v, %v", bs, err)
	}
	if q, n := bucketQuantile(bs, 0.99); q != time.Millisecond || n != 100 {
		t.Fatalf("p99 = %v of %d, want 1ms of 100", q, n)
	}
	if q, _ := bucketQuantile(bs, 0.5); q != 500*time.Microsecond {
		t.Fatalf("p50 = %v", q)
	}
	if q, _ := bucketQuantile(bs, 1); q != 10*time.Millisecond {
		t.Fatalf("max = %v", q)
	}
	// A window: 5 more pauses, all between 1 and 10 ms.
	later := append([]promBucket(nil), bs...)
	later[3].count += 5
	later[4].count += 5
	d, err := histDelta(bs, later)
	if err != nil {
		t.Fatal(err)
	}
	if q, n := bucketQuantile(d, 0.99); q != 10*time.Millisecond || n != 5 {
		t.Fatalf("window p99 = %v of %d, want 10ms of 5", q, n)
	}
	if q, n := bucketQuantile(make([]promBucket, 3), 0.99); q != 0 || n != 0 {
		t.Fatalf("empty window = %v of %d", q, n)
	}
	// Counts past the last finite bound report that bound.
	over := []promBucket{{0.001, 0}, {math.Inf(1), 4}}
	if q, _ := bucketQuantile(over, 0.99); q != time.Millisecond {
		t.Fatalf("beyond the bounds = %v", q)
	}
	if _, err := histDelta(later, bs); err == nil {
		t.Fatal("a shrinking histogram diffs")
	}
	if _, err := promHistogram(s, "nope"); err == nil {
		t.Fatal("a missing histogram parses")
	}
}
