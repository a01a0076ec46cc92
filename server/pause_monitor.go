package server

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"
)

// PauseMonitor is ZooKeeper's JVM pause monitor (jvm.pause.monitor and the
// jvm.pause.*.ms keys): a goroutine sleeps for Sleep again and again, and the time each
// sleep overran by is a pause of the whole process or of its host (a garbage
// collection's stop, a scheduler starved of CPU, a SIGSTOP, a virtual machine
// descheduled). Each overrun is recorded in jvm_pause_time_ms; one above Info is logged
// at INFO, one above Warn at WARN, with the garbage collections since the sleep before.
type PauseMonitor struct {
	On                bool
	Sleep, Info, Warn time.Duration
}

// DefaultPauseMonitor is ZooKeeper's default: off, a 500 ms sleep, thresholds of 1 s
// and 10 s.
func DefaultPauseMonitor() PauseMonitor {
	return PauseMonitor{Sleep: 500 * time.Millisecond, Info: time.Second, Warn: 10 * time.Second}
}

// pauseWatch is a running pause monitor.
type pauseWatch struct {
	cfg   PauseMonitor
	srv   *Server
	sleep func(time.Duration) bool // false once the server stops
	now   func() time.Time
	gc    func() gcFigures
	// infos and warns count the pauses logged at each level, as ZooKeeper's monitor
	// counts them for its messages.
	infos, warns int64
}

// gcFigures are the runtime's garbage collections so far.
type gcFigures struct {
	cycles uint64
	pause  time.Duration // the stop-the-world pauses, estimated from their CPU time
}

// startPauseMonitor starts the monitor if the configuration turns it on. ZooKeeper's
// thread dies at once on a negative sleep (Thread.sleep refuses it); zkraft runs none
// and says so.
func (s *Server) startPauseMonitor() {
	cfg := s.cfg.PauseMonitor
	if !cfg.On {
		return
	}
	if cfg.Sleep <= 0 {
		s.log.Warn("jvm.pause.monitor: no pause monitor runs with a sleep time that is not positive", "sleepMs", cfg.Sleep.Milliseconds())
		return
	}
	w := &pauseWatch{cfg: cfg, srv: s, now: time.Now, gc: readGC, sleep: func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-s.stopping:
			return false
		}
	}}
	s.log.Info("starting the pause monitor", "infoThresholdMs", cfg.Info.Milliseconds(), "warnThresholdMs", cfg.Warn.Milliseconds(),
		"sleepTimeMs", cfg.Sleep.Milliseconds())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		w.run()
	}()
}

// run sleeps until the server stops, recording each overrun in whole milliseconds, as
// ZooKeeper's monitor takes them from the wall clock's milliseconds (zkraft from the
// monotonic clock, so a clock step is no pause).
func (w *pauseWatch) run() {
	before := w.gc()
	for {
		start := w.now()
		if !w.sleep(w.cfg.Sleep) {
			return
		}
		extra := w.now().Sub(start) - w.cfg.Sleep
		if extra >= 0 {
			w.srv.metrics.pauseTime.record(extra.Milliseconds())
		}
		after := w.gc()
		switch {
		case extra > w.cfg.Warn:
			w.warns++
			w.srv.log.Warn(w.message(extra, before, after))
		case extra > w.cfg.Info:
			w.infos++
			w.srv.log.Info(w.message(extra, before, after))
		}
		before = after
	}
}

// message is ZooKeeper's line for a pause, naming the process instead of the JVM.
func (w *pauseWatch) message(extra time.Duration, before, after gcFigures) string {
	gc := "No GCs detected"
	if n := after.cycles - before.cycles; n > 0 {
		gc = fmt.Sprintf("GC had collection(s): count=%d time=%dms", n, (after.pause - before.pause).Milliseconds())
	}
	return fmt.Sprintf("Detected pause in the server process or host machine (eg GC): pause of approximately %d ms, total pause: info level: %d, warn level: %d; %s",
		extra.Milliseconds(), w.infos, w.warns, gc)
}

var gcSamples = []string{metricGCCycles, "/cpu/classes/gc/pause:cpu-seconds"}

// readGC reads the runtime's collections without stopping the world (runtime/metrics):
// the pause time is the CPU time of the pauses spread over GOMAXPROCS, as the runtime
// counts a pause once per P.
func readGC() gcFigures {
	s := make([]metrics.Sample, len(gcSamples))
	for i, name := range gcSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	var f gcFigures
	if s[0].Value.Kind() == metrics.KindUint64 {
		f.cycles = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindFloat64 {
		f.pause = time.Duration(s[1].Value.Float64() / float64(runtime.GOMAXPROCS(0)) * float64(time.Second))
	}
	return f
}
