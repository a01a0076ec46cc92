package server

import (
	"math"
	"net/http"
	"net/http/httptest"
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
