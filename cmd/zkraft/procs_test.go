package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// governorRun drives a governor with windows of waits, one procsWindow apart.
type governorRun struct {
	t   *testing.T
	g   *procsGovernor
	set []int
	now time.Time
}

func newGovernorRun(t *testing.T) *governorRun {
	r := &governorRun{t: t, now: time.Unix(1_000_000, 0)}
	r.g = newProcsGovernor(4, func(n int) { r.set = append(r.set, n) }, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return r.now })
	r.set = []int{4} // Go's default, until it governs
	r.g.begin()
	return r
}

func (r *governorRun) windows(n int, p99 time.Duration, samples uint64) {
	for range n {
		r.now = r.now.Add(procsWindow)
		r.g.observe(r.now, p99, samples)
	}
}

// idle lets d pass in windows without waits.
func (r *governorRun) idle(d time.Duration) { r.windows(int(d/procsWindow), 0, 0) }

func (r *governorRun) procs() int { return r.set[len(r.set)-1] }

func (r *governorRun) want(procs int, state procsState, when string) {
	r.t.Helper()
	if r.procs() != procs || r.g.state != state {
		r.t.Fatalf("%s: %d Ps in state %d (set %v), want %d in %d", when, r.procs(), r.g.state, r.set, procs, state)
	}
}

// probeWindows is how many windows a probe of the default lasts.
const probeWindows = int(procsProbe / procsWindow)

func TestTheProcsGovernorKeepsOnePWhileReadyGoroutinesDoNotWaitLong(t *testing.T) {
	r := newGovernorRun(t)
	r.want(1, procsOne, "at the start")
	r.windows(20, procsWaitLimit/2, 10_000)
	r.windows(20, 50*procsWaitLimit, procsMinSamples-1) // too few waits to say anything
	for range 10 {                                      // long waits, but never procsTrips windows in a row
		r.windows(procsTrips-1, procsWaitLimit, procsMinSamples)
		r.windows(1, procsWaitLimit/2, procsMinSamples)
	}
	if len(r.set) != 2 {
		t.Fatalf("changed Ps %v without procsTrips windows of long waits in a row", r.set)
	}
}

// A snapshot written or installed (the server's LongWork) gets the default at once, until
// the last one running ends; the waits meanwhile decide nothing.
func TestTheProcsGovernorGivesTheCPUsBackDuringLongWork(t *testing.T) {
	r := newGovernorRun(t)
	done1 := r.g.longWork()
	r.want(4, procsLong, "once a snapshot started")
	done2 := r.g.longWork()
	r.windows(20, 10*procsWaitLimit, 1000)
	r.want(4, procsLong, "during long work, whatever the waits")
	done1()
	done1() // once only
	r.want(4, procsLong, "while a second snapshot runs")
	done2()
	r.want(1, procsOne, "once the long work ended")
	// Long work during a hold of the default outlives the hold, and ends with one P.
	r.windows(procsTrips, 4*procsWaitLimit, 1000)
	r.windows(probeWindows, 0, 2000)
	r.want(4, procsMany, "after a probe")
	done := r.g.longWork()
	r.idle(r.g.backoff + time.Second) // past the hold's end
	r.want(4, procsLong, "during long work that outlived the hold")
	done()
	r.want(1, procsOne, "after long work that outlived a hold")
	// Long work before the governor begins: it begins with the default.
	g := newProcsGovernor(4, func(int) {}, slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	early := g.longWork()
	g.begin()
	if g.state != procsLong {
		t.Fatalf("began in state %d during long work", g.state)
	}
	early()
	if g.state != procsOne {
		t.Fatalf("state %d after the long work, want one P", g.state)
	}
}

// Long waits with one P, and a quarter more goroutines run with the default: one P held
// the server back (a disk that got slow, a dedicated machine at saturation), and the
// default stays for a hold that doubles each time one P does not last, up to
// procsHoldMax.
func TestTheProcsGovernorGivesTheCPUsBackWhenOnePMakesGoroutinesWait(t *testing.T) {
	r := newGovernorRun(t)
	want := procsHoldMin
	for range 10 {
		r.windows(procsTrips, 4*procsWaitLimit, 1000)
		r.want(4, procsProbing, "after long waits with one P")
		r.windows(probeWindows, 4*procsWaitLimit, 1250)
		r.want(4, procsMany, "after a quarter more goroutines ran in the probe")
		if held := r.g.until.Sub(r.now); held != want {
			t.Fatalf("the default is held for %v, want %v", held, want)
		}
		r.idle(want - procsWindow)
		r.want(4, procsMany, "before the hold ended")
		r.idle(procsWindow)
		r.want(1, procsOne, "once the hold ended")
		want = min(2*want, procsHoldMax)
	}
	// One P that lasted procsSettled starts the holds over.
	r.idle(procsSettled)
	r.windows(procsTrips, 4*procsWaitLimit, 1000)
	r.windows(probeWindows, 0, 5000)
	if held := r.g.until.Sub(r.now); r.g.state != procsMany || held != procsHoldMin {
		t.Fatalf("after one P lasted %v: state %d held %v, want the default for %v", procsSettled, r.g.state, held, procsHoldMin)
	}
}

// No quarter more goroutines run with the default, however much shorter the waits: the
// machine's CPUs are busy (a second P's waits are for the kernel), more Ps do not help,
// and one P comes back with long waits not looked at for a hold.
func TestTheProcsGovernorKeepsOnePWhenTheDefaultGetsNoMoreDone(t *testing.T) {
	r := newGovernorRun(t)
	r.windows(procsTrips, 2*procsWaitLimit, 1000)
	r.want(4, procsProbing, "after long waits with one P")
	r.windows(probeWindows, 0, 1249)
	r.want(1, procsOne, "after the probe ran a fifth more goroutines")
	r.windows(int(procsHoldMin/procsWindow)-1, 2*procsWaitLimit, 1000)
	r.want(1, procsOne, "during the quiet hold")
	r.windows(procsTrips, 2*procsWaitLimit, 1000)
	r.want(4, procsProbing, "after the quiet hold")
}

func TestPercentileLowIsTheLowerBoundOfTheQuantilesBucket(t *testing.T) {
	bounds := []float64{math.Inf(-1), 0, 1e-6, 1e-3, 1e-2, math.Inf(1)}
	for _, tc := range []struct {
		counts []uint64
		want   time.Duration
	}{
		{[]uint64{0, 0, 0, 0, 0}, 0},
		{[]uint64{0, 100, 0, 0, 0}, 0},
		{[]uint64{0, 99, 1, 0, 0}, 0},                // the 99th of 100 is in the first bucket
		{[]uint64{0, 98, 1, 1, 0}, time.Microsecond}, // in the second
		{[]uint64{0, 90, 0, 10, 0}, time.Millisecond},
		{[]uint64{0, 0, 0, 0, 5}, 10 * time.Millisecond},
	} {
		var total uint64
		for _, c := range tc.counts {
			total += c
		}
		if got := percentileLow(tc.counts, bounds, 0.99, total); got != tc.want {
			t.Errorf("percentileLow(%v) = %v, want %v", tc.counts, got, tc.want)
		}
	}
}

// The runtime's histogram is read a window at a time: a burst of goroutines made to wait
// for a busy P shows in the window it happened in, not in the next.
func TestSchedWaitsCountsAWindowAtATime(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := newSchedWaits()
	done := make(chan struct{})
	for range 200 {
		go func() { done <- struct{}{} }()
	}
	spin := time.Now().Add(20 * time.Millisecond)
	for time.Now().Before(spin) { // holds the one P while the goroutines are ready
	}
	for range 200 {
		<-done
	}
	p99, n := w.next()
	if n == 0 || p99 < time.Millisecond {
		t.Fatalf("after 200 goroutines waited behind a 20 ms spin: %d waits, p99 %v", n, p99)
	}
	if _, n2 := w.next(); n2 >= n {
		t.Errorf("the next window counted %d waits, the burst's was %d", n2, n)
	}
}

func TestSyncTimeTimesSyncedWritesInTheDataDir(t *testing.T) {
	dir := t.TempDir()
	d, err := syncTime(dir)
	if err != nil || d <= 0 {
		t.Fatalf("syncTime = %v, %v", d, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the probe left %v behind", left)
	}
	if _, err := syncTime(filepath.Join(dir, "missing")); err == nil {
		t.Error("no error for a data dir that does not exist")
	}
}

// The process's governor sets one P and gives Go's default back; GOMAXPROCS in the
// environment leaves the process without one.
func TestTheProcessGovernorSetsOnePAndGivesTheDefaultBack(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "GOMAXPROCS" {
				return v
			}
			return ""
		}
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if g := processGovernor(env("2"), log); g != nil {
		t.Fatal("a governor although GOMAXPROCS is set")
	}
	defer runtime.SetDefaultGOMAXPROCS()
	runtime.SetDefaultGOMAXPROCS()
	def := runtime.GOMAXPROCS(0)
	g := processGovernor(env(""), log)
	if def < 2 {
		if g != nil {
			t.Fatalf("a governor with a default of %d P", def)
		}
		t.Skip("one CPU: nothing to govern")
	}
	if g == nil || g.many != def {
		t.Fatalf("governor %v for a default of %d Ps", g, def)
	}
	g.set(1)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("%d Ps after one was set", n)
	}
	g.set(g.many)
	if n := runtime.GOMAXPROCS(0); n != def {
		t.Fatalf("%d Ps after the default (%d) was given back", n, def)
	}
}

// An idle server's windows are idle ones, procsIdleWindow long, until one of them ran as
// many goroutines as busy windows of procsWindow would; their waits decide nothing, but
// a hold of the default that is due ends on time.
func TestTheProcsGovernorLooksLessOftenWhileIdle(t *testing.T) {
	r := newGovernorRun(t)
	next := func(d time.Duration, p99 time.Duration, samples uint64) time.Duration {
		r.now = r.now.Add(d)
		return r.g.window(r.now, p99, samples)
	}
	if d := next(procsWindow, 0, procsMinSamples-1); d != procsIdleWindow {
		t.Fatalf("after a window with too few goroutines the next lasts %v, want %v", d, procsIdleWindow)
	}
	busyShort := uint64(procsMinSamples)
	if d := next(procsIdleWindow, 10*procsWaitLimit, busyShort); d != procsIdleWindow {
		t.Fatalf("an idle window with a short window's goroutines is followed by one of %v, want %v", d, procsIdleWindow)
	}
	for range 2 * procsTrips { // long waits in idle windows decide nothing
		next(procsIdleWindow, 10*procsWaitLimit, busyShort)
	}
	r.want(1, procsOne, "after long waits in idle windows")
	if d := next(procsIdleWindow, 0, busyShort*uint64(procsIdleWindow/procsWindow)); d != procsWindow {
		t.Fatalf("after a busy idle window the next lasts %v, want %v", d, procsWindow)
	}
	// A hold of the default ends on time though the server went idle.
	for range procsTrips {
		next(procsWindow, 4*procsWaitLimit, 1000)
	}
	for range probeWindows {
		next(procsWindow, 0, 1250)
	}
	r.want(4, procsMany, "after the probe got more done")
	end := r.g.until
	next(procsWindow, 0, 0)
	for r.now.Before(end) {
		next(procsIdleWindow, 0, 0)
	}
	r.want(1, procsOne, "once the hold ended during idle windows")
}
