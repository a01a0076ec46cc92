package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The pause monitor records each sleep's overrun in jvm_pause_time_ms and logs those
// above its thresholds at INFO and WARN with ZooKeeper's counts, naming the collections
// since the sleep before (a fake clock and fake GC figures drive it).
func TestPauseMonitorRecordsAndLogsOverruns(t *testing.T) {
	var buf bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	clock := time.Unix(1000, 0)
	overruns := []time.Duration{0, 30 * time.Millisecond, 1500 * time.Millisecond, 12 * time.Second, 200 * time.Millisecond}
	// Read before the first sleep and after each: three collections during the fourth.
	gcs := []gcFigures{{cycles: 5}, {cycles: 5}, {cycles: 5}, {cycles: 5}, {cycles: 8, pause: 3 * time.Millisecond}, {cycles: 8, pause: 3 * time.Millisecond}}
	slept, read := 0, 0
	w := &pauseWatch{cfg: PauseMonitor{On: true, Sleep: 500 * time.Millisecond, Info: time.Second, Warn: 10 * time.Second}, srv: s,
		now: func() time.Time { return clock },
		gc: func() gcFigures {
			read++
			return gcs[read-1]
		},
		sleep: func(d time.Duration) bool {
			if slept == len(overruns) {
				return false
			}
			clock = clock.Add(d + overruns[slept])
			slept++
			return true
		}}
	w.run()

	m := map[string]int64{}
	for _, v := range s.metrics.pauseTime.metrics("jvm_pause_time_ms", true) {
		m[v.name], _ = v.value.(int64)
	}
	if m["cnt_jvm_pause_time_ms"] != 5 || m["sum_jvm_pause_time_ms"] != 13730 || m["max_jvm_pause_time_ms"] != 12000 {
		t.Errorf("jvm_pause_time_ms: %v", m)
	}
	if w.infos != 1 || w.warns != 1 {
		t.Errorf("info %d, warn %d pauses; want 1 and 1", w.infos, w.warns)
	}
	logs := buf.String()
	for _, want := range []string{
		"level=INFO msg=\"Detected pause in the server process or host machine (eg GC): pause of approximately 1500 ms, total pause: info level: 1, warn level: 0; No GCs detected\"",
		"level=WARN msg=\"Detected pause in the server process or host machine (eg GC): pause of approximately 12000 ms, total pause: info level: 1, warn level: 1; GC had collection(s): count=3 time=3ms\"",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("no %s in\n%s", want, logs)
		}
	}
	if n := strings.Count(logs, "Detected pause"); n != 2 {
		t.Errorf("%d pauses logged, want 2:\n%s", n, logs)
	}
}
