package server

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCoarsenPauseHistogram(t *testing.T) {
	edges := []float64{math.Inf(-1), 0.0001, 0.0004, 0.0009, 0.002, math.Inf(1)}
	counts := []uint64{1, 2, 3, 4, 5}
	bounds := []float64{0.0005, 0.001}
	// [-Inf,0.1ms) and [0.1,0.4ms) fit under 0.5 ms; [0.4,0.9ms) under 1 ms; the rest +Inf.
	if got, want := coarsen(counts, edges, bounds), []uint64{3, 6, 15}; !slices.Equal(got, want) {
		t.Fatalf("coarsen = %v, want %v", got, want)
	}
}

func TestRuntimeMetricsText(t *testing.T) {
	var b strings.Builder
	writeRuntimeMetrics(&b)
	out := b.String()
	for _, want := range []string{"\ngo_heap_live_bytes ", "# TYPE go_gc_pause_seconds histogram\n",
		"\ngo_gc_pause_seconds_bucket{le=\"0.001\"} ", "\ngo_gc_pause_seconds_bucket{le=\"+Inf\"} ", "\ngo_gc_cycles_total ", "# TYPE go_gc_pause_stopping_seconds histogram\n"} {
		if !strings.Contains("\n"+out, want) {
			t.Fatalf("runtime metrics lack %q:\n%s", want, out)
		}
	}
}

func TestDebugGCHandler(t *testing.T) {
	rec := httptest.NewRecorder()
	serveDebugGC(rec, httptest.NewRequest(http.MethodGet, "/debug/gc", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("GET /debug/gc: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	serveDebugGC(rec, httptest.NewRequest(http.MethodPost, "/debug/gc", nil))
	if n, err := strconv.ParseUint(strings.TrimSpace(rec.Body.String()), 10, 64); rec.Code != 200 || err != nil || n == 0 {
		t.Fatalf("POST /debug/gc: %d %q", rec.Code, rec.Body.String())
	}
}

// /metrics has the Java client's JVM memory areas, filled from the Go runtime: the
// heap's max is the runtime's memory limit (-1 without one, as the JVM's undefined
// max), so ZooKeeper's alerting rule jvm_memory_bytes_used / jvm_memory_bytes_max{area="heap"}
// compares the heap with it.
func TestJVMMemoryAreas(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	a := readMemoryAreas()
	if a.heapMax != -1 || a.heapUsed <= 0 || a.heapCommitted < a.heapUsed || a.nonheapUsed <= 0 || a.nonheapCommitted < a.nonheapUsed {
		t.Fatalf("without a limit: %+v", a)
	}
	const limit = 3 << 30
	debug.SetMemoryLimit(limit)
	port := mustFreePort(t)
	startServer(t, func(c *Config) { c.MetricsHost, c.MetricsPort = "127.0.0.1", port })
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	series := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if name, v, ok := strings.Cut(l, " "); ok && strings.HasPrefix(name, "jvm_memory_bytes_") {
			series[name], _ = strconv.ParseFloat(v, 64)
		}
	}
	if got := series[`jvm_memory_bytes_max{area="heap"}`]; got != limit {
		t.Errorf(`jvm_memory_bytes_max{area="heap"} %v, want %d`, got, limit)
	}
	if used := series[`jvm_memory_bytes_used{area="heap"}`]; used <= 0 || used/limit >= 0.8 {
		t.Errorf(`jvm_memory_bytes_used{area="heap"} %v of a %d limit`, used, limit)
	}
	for _, k := range []string{`jvm_memory_bytes_committed{area="heap"}`, `jvm_memory_bytes_used{area="nonheap"}`, `jvm_memory_bytes_committed{area="nonheap"}`} {
		if series[k] <= 0 {
			t.Errorf("%s %v", k, series[k])
		}
	}
	if got, ok := series[`jvm_memory_bytes_max{area="nonheap"}`]; !ok || got != -1 {
		t.Errorf(`jvm_memory_bytes_max{area="nonheap"} %v, %v`, got, ok)
	}
	// metricsProvider.exportJvmInfo=false leaves them out.
	port = mustFreePort(t)
	startServer(t, func(c *Config) { c.MetricsHost, c.MetricsPort, c.MetricsNoJVMInfo = "127.0.0.1", port, true })
	resp, err = http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "jvm_memory_bytes") || !strings.Contains(string(body), "go_heap_live_bytes") {
		t.Errorf("with exportJvmInfo=false:\n%s", body)
	}
}
