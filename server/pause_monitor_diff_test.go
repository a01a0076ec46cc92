package server

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// With jvm.pause.monitor=true both servers watch for pauses of their process: stopped
// (SIGSTOP) for 800 ms and let go, each records a pause of about that length in
// jvm_pause_time_ms, logs it at INFO (above jvm.pause.info-threshold.ms) and not at WARN,
// and keeps serving.
func TestPauseMonitorMatchesZooKeeper(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	props := consoleLog4j(t, "org.apache.zookeeper.server.util.JvmPauseMonitor", "%p %m%n")
	servers := startBoth(t, func(string) ztest.Options {
		return ztest.Options{Logf: t.Logf, Log4j: props, ExtraConfig: map[string]string{"jvm.pause.monitor": "true",
			"jvm.pause.sleep.time.ms": "50", "jvm.pause.info-threshold.ms": "400", "jvm.pause.warn-threshold.ms": "60000"}}
	})
	const pause = 800 * time.Millisecond
	for name, s := range servers {
		value := func(key string) int64 {
			n, err := strconv.ParseFloat(mntrLine(askFourLetter(t, s.Addr, "mntr"), key), 64)
			if err != nil {
				t.Fatalf("%s: mntr's %s: %v", name, key, err)
			}
			return int64(n)
		}
		// The monitor runs from the start: its sleeps are counted.
		for deadline := time.Now().Add(10 * time.Second); value("cnt_jvm_pause_time_ms") == 0; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no sleep of the pause monitor counted", name)
			}
		}
		stopProcess(t, s)
		time.Sleep(pause)
		continueProcess(t, s)
		var longest int64
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			if longest = value("max_jvm_pause_time_ms"); longest >= pause.Milliseconds()*3/4 || time.Now().After(deadline) {
				break
			}
		}
		if longest < pause.Milliseconds()*3/4 || longest > 30_000 {
			t.Errorf("%s: longest pause %d ms after a stop of %v", name, longest, pause)
		}
		log := s.Log()
		if !strings.Contains(log, "INFO Detected pause in JVM or host machine (eg GC): pause of approximately") &&
			!strings.Contains(log, "level=INFO msg=\"Detected pause in the server process or host machine (eg GC): pause of approximately") {
			t.Errorf("%s: no INFO line for the pause in its log:\n%s", name, log)
		}
		if strings.Contains(log, "WARN Detected pause") || strings.Contains(log, "level=WARN msg=\"Detected pause") {
			t.Errorf("%s: a pause below the warn threshold logged at WARN:\n%s", name, log)
		}
		if got := askFourLetter(t, s.Addr, "ruok"); got != "imok" {
			t.Errorf("%s: ruok after the pause: %q", name, got)
		}
	}
}
