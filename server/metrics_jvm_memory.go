package server

import (
	"fmt"
	"math"
	"runtime/metrics"
	"strings"
)

// The JVM memory areas of ZooKeeper's Prometheus provider (the Java client's
// jvm_memory_bytes_used, _committed and _max, by area "heap" and "nonheap"), filled
// from the Go runtime, so that the JVM heap rule of ZooKeeper's alerting example
// (jvm_memory_bytes_used / jvm_memory_bytes_max{area="heap"} > 0.8) watches zkraft's heap
// against its memory limit:
//   - heap used: the heap's objects, live or not yet swept;
//   - heap committed: the heap's spans the runtime holds from the OS (objects, the
//     unused parts of their spans, free spans not yet given back);
//   - heap max: the runtime's memory limit (memoryLimit, -Xmx, a container's limit;
//     cmd/zkraft/memory.go), or -1 without one, as the JVM reports an undefined max;
//   - nonheap: everything else the runtime holds (goroutine and OS stacks, its
//     metadata, profiling buckets, other), committed and used (without the metadata's
//     free parts); its max is -1.
var memoryClasses = []string{
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/gc/gomemlimit:bytes",
}

// memoryAreas are the used, committed and max bytes of the heap and nonheap areas.
type memoryAreas struct{ heapUsed, heapCommitted, heapMax, nonheapUsed, nonheapCommitted int64 }

func readMemoryAreas() memoryAreas {
	samples := make([]metrics.Sample, len(memoryClasses))
	for i, n := range memoryClasses {
		samples[i].Name = n
	}
	metrics.Read(samples)
	v := make([]int64, len(samples))
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = int64(min(s.Value.Uint64(), math.MaxInt64))
		}
	}
	total, released, objects, unused, free, mcacheFree, mspanFree, limit := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	a := memoryAreas{heapUsed: objects, heapCommitted: objects + unused + free, heapMax: limit}
	if limit <= 0 || limit == math.MaxInt64 {
		a.heapMax = -1
	}
	a.nonheapCommitted = max(total-released-a.heapCommitted, 0)
	a.nonheapUsed = max(a.nonheapCommitted-mcacheFree-mspanFree, 0)
	return a
}

func writeJVMMemoryMetrics(b *strings.Builder) {
	a := readMemoryAreas()
	for _, m := range []struct {
		name, help    string
		heap, nonheap int64
	}{
		{"jvm_memory_bytes_used", "Used bytes of a given JVM memory area.", a.heapUsed, a.nonheapUsed},
		{"jvm_memory_bytes_committed", "Committed (bytes) of a given JVM memory area.", a.heapCommitted, a.nonheapCommitted},
		{"jvm_memory_bytes_max", "Max (bytes) of a given JVM memory area.", a.heapMax, -1},
	} {
		fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s gauge\n%s{area=\"heap\"} %d\n%s{area=\"nonheap\"} %d\n",
			m.name, m.help, m.name, m.name, m.heap, m.name, m.nonheap)
	}
}
