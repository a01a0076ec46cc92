package main

import (
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"time"
)

// The processor governor: one P while one keeps up.
//
// Go runs Go code on GOMAXPROCS threads at once (its Ps), by default one per CPU. On a
// machine zkraft shares with its clients or other members, a second P costs more than it
// gives: every goroutine made ready wakes an idle P's thread, which looks for work and
// sleeps again (futex calls and spinning, about a quarter of a lightly loaded member's
// CPU), and each stop-the-world of the collector waits for every P's thread, one of
// which the kernel is often not running (the GC pauses of 1.5-5 ms on two busy cores).
// With one P zkraft spent less CPU per request in most cells measured (15-50% in the
// write cells), answered 10-40% more writes a second, and stopped the world in
// 0.07-0.3 ms (docs/benchmarks.md, thirteenth and twenty-ninth sessions).
//
// One P is wrong in two cases: a system call that blocks holds it (an fdatasync on a
// disk that syncs in milliseconds) until the runtime's monitor takes it back, which with
// a 2 ms disk halved a read-mostly load's rate (thirteenth session), and a long
// computation (a snapshot of a big tree) holds it for a scheduler slice (10 ms) at a
// time. So:
//
//   - zkraft first times procsSyncProbes synced writes in its data dir, as its log
//     syncs (the fastest of up to procsSyncRounds rounds); a median over procsSyncLimit
//     leaves Go's default alone;
//   - otherwise it runs with one P and reads, every procsWindow (procsIdleWindow while
//     too few goroutines run to say anything), how long goroutines ready to run waited
//     (the runtime's /sched/latencies). When procsTrips windows in a row have a p99 of
//     procsWaitLimit or more, it gives back Go's default for procsProbe and compares
//     how much got done: if at least a quarter more goroutines ran per window (the
//     median of the probe's windows against the mean of the long waits' ones), one P
//     held zkraft back, and the default stays for a hold; if not, one P comes back and
//     long waits are not looked at for a hold. (The waits themselves do not tell: on a
//     machine whose CPUs are all busy, a second P turns the runtime's waits into waits
//     for the kernel to run its thread, which the runtime does not see, and got less
//     done.) Each hold doubles the last one, from procsHoldMin to procsHoldMax, and
//     starts over from procsHoldMin once one P lasted procsSettled.
//
// A long computation zkraft knows of, writing or installing a snapshot of the whole
// tree, does not wait for the waits to show: the server tells the governor
// (server.Config.LongWork), which gives the default back until it ends (with one P at
// 1M znodes the longest write during snapshots was 80 ms against 20 with the default).
//
// GOMAXPROCS in the environment turns the governor off, as does a default of one P (one
// CPU, or a container's CPU limit under two).

const (
	procsSyncProbes = 9
	procsSyncLimit  = time.Millisecond
	procsSyncRounds = 3
	procsSyncGap    = time.Second
	procsWindow     = 250 * time.Millisecond
	procsWaitLimit  = 8 * time.Millisecond
	procsTrips      = 2
	procsProbe      = time.Second
	procsMinSamples = 50 // fewer transitions to running in a window say nothing (an idle server)
	procsIdleWindow = 2 * time.Second
	procsHoldMin    = 10 * time.Second
	procsHoldMax    = 10 * time.Minute
	procsSettled    = 10 * time.Minute
)

// procsState is what the governor is doing.
type procsState int

const (
	procsOff     procsState = iota // not governing: Go's default
	procsOne                       // one P, watching the waits (unless quiet)
	procsProbing                   // the default, for procsProbe, to compare the goroutines run
	procsMany                      // the default, for a hold
	procsLong                      // the default, while long work runs
)

// procsGovernor decides between one P and many (Go's default); set applies a choice.
// Its methods may be called from any goroutine.
type procsGovernor struct {
	many  int
	set   func(int)
	log   *slog.Logger
	clock func() time.Time

	mu    sync.Mutex
	state procsState
	long  int       // long works running
	since time.Time // when the state began
	// until ends a hold: procsMany's, or procsOne's quiet time.
	until   time.Time
	backoff time.Duration // the next hold
	trips   int           // windows in a row with one P whose waits reached the limit
	oneWait time.Duration // the waits' p99 with one P that started the probe
	oneRuns uint64        // goroutines run in the windows of long waits with one P
	probed  []uint64      // goroutines run in each window of the probe
	idle    bool          // the window running is an idle one (procsIdleWindow long)
}

// newProcsGovernor returns a governor that does not govern until begin.
func newProcsGovernor(many int, set func(int), log *slog.Logger, clock func() time.Time) *procsGovernor {
	return &procsGovernor{many: many, set: set, log: log, clock: clock, backoff: procsHoldMin}
}

// begin starts governing with one P, or with the default while long work runs.
func (g *procsGovernor) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != procsOff {
		return
	}
	if g.long > 0 {
		g.state = procsLong
		return
	}
	now := g.clock()
	g.toOne(now, now)
}

// longWork is server.Config.LongWork: the default while long work runs, then one P
// (a hold of the default the long work interrupted ends with it: were the hold's
// reasons still there, the waits would bring a probe again).
func (g *procsGovernor) longWork() (done func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.long++; g.long == 1 && g.state != procsOff {
		if g.state == procsOne {
			g.set(g.many)
		}
		g.state = procsLong
	}
	return sync.OnceFunc(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.long--; g.long == 0 && g.state == procsLong {
			now := g.clock()
			g.toOne(now, now)
		}
	})
}

func (g *procsGovernor) toOne(now, quietUntil time.Time) {
	g.state, g.since, g.until, g.trips, g.oneRuns = procsOne, now, quietUntil, 0, 0
	g.set(1)
}

// hold is the next hold, doubled for the one after unless one P had lasted.
func (g *procsGovernor) hold(oneLasted time.Duration) time.Duration {
	if oneLasted >= procsSettled {
		g.backoff = procsHoldMin
	}
	h := g.backoff
	g.backoff = min(2*g.backoff, procsHoldMax)
	return h
}

// observe takes one window: the p99 of the waits of goroutines ready to run, out of
// samples waits.
func (g *procsGovernor) observe(now time.Time, p99 time.Duration, samples uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	enough := samples >= procsMinSamples
	switch g.state {
	case procsOne:
		if !enough || p99 < procsWaitLimit || now.Before(g.until) {
			g.trips, g.oneRuns = 0, 0
			return
		}
		g.oneRuns += samples
		if g.trips++; g.trips < procsTrips {
			return
		}
		g.oneWait, g.oneRuns, g.probed = p99, g.oneRuns/uint64(g.trips), g.probed[:0]
		g.state, g.until = procsProbing, now.Add(procsProbe)
		g.set(g.many)
	case procsProbing:
		g.probed = append(g.probed, samples)
		if now.Before(g.until) {
			return
		}
		slices.Sort(g.probed)
		manyRuns := g.probed[len(g.probed)/2]
		h := g.hold(g.until.Add(-procsProbe).Sub(g.since))
		if 4*manyRuns >= 5*g.oneRuns {
			g.state, g.since, g.until = procsMany, now, now.Add(h)
			g.log.Info("processors: goroutines waited for the one P and more ran with every CPU, running Go code on every CPU",
				"p99_wait_one", g.oneWait, "runs_one", g.oneRuns, "runs_all", manyRuns, "procs", g.many, "one_again_in", h)
			return
		}
		g.log.Debug("processors: no more goroutines ran with every CPU, one P kept",
			"p99_wait_one", g.oneWait, "runs_one", g.oneRuns, "runs_all", manyRuns, "quiet_for", h)
		g.toOne(now, now.Add(h))
	case procsMany:
		if !now.Before(g.until) {
			g.toOne(now, now)
			g.log.Info("processors: running Go code on one P again")
		}
	}
}

// processGovernor is the governor of this process's Ps, nil where GOMAXPROCS is set or
// Go's default is one P. Giving the default back hands the choice to the runtime again,
// which then follows a container's changed CPU limit as it does without the governor.
func processGovernor(getenv func(string) string, log *slog.Logger) *procsGovernor {
	many := runtime.GOMAXPROCS(0)
	if getenv("GOMAXPROCS") != "" || many < 2 {
		return nil
	}
	return newProcsGovernor(many, func(n int) {
		if n == 1 {
			runtime.GOMAXPROCS(1)
		} else {
			runtime.SetDefaultGOMAXPROCS()
		}
	}, log, time.Now)
}

// run governs until stop is closed, unless the disk of dataDir syncs slowly. The disk is
// timed up to procsSyncRounds times, procsSyncGap apart, and the fastest round counts: a
// member starting beside others on one disk sees their start-up syncs in its first round.
func (g *procsGovernor) run(dataDir string, stop <-chan struct{}) {
	go func() {
		var took time.Duration
		var err error
		for round := range procsSyncRounds {
			if round > 0 {
				select {
				case <-stop:
					return
				case <-time.After(procsSyncGap):
				}
			}
			var t time.Duration
			if t, err = syncTime(dataDir); err != nil {
				break
			}
			if round == 0 || t < took {
				took = t
			}
			if took <= procsSyncLimit {
				break
			}
		}
		if err != nil || took > procsSyncLimit {
			g.log.Info("processors: Go code runs on every CPU (the data dir's disk syncs slowly for one P)",
				"median_sync", took, "err", err)
			return
		}
		g.log.Info("processors: Go code runs on one P while one keeps up (GOMAXPROCS sets it for good)",
			"median_sync", took, "cpus", g.many)
		g.begin()
		w := newSchedWaits()
		t := time.NewTimer(procsWindow)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				p99, n := w.next()
				t.Reset(g.window(now, p99, n))
			}
		}
	}()
}

// window takes the window that just ended (the p99 of the waits of goroutines ready to
// run, out of samples) and returns how long the next one is. An idle server's windows
// say nothing (procsMinSamples), and waking four times a second to read them was most
// of an idle standalone server's CPU: after a window with too few, the next is an idle
// one, procsIdleWindow long, whose waits are not looked at (a hold or probe that is due
// still ends). Idle windows go on until one ran as many goroutines as busy windows of
// procsWindow would, so the waits are looked at again within procsIdleWindow of a
// load's start.
func (g *procsGovernor) window(now time.Time, p99 time.Duration, samples uint64) time.Duration {
	g.mu.Lock()
	wasIdle := g.idle
	g.mu.Unlock()
	if wasIdle {
		g.observe(now, 0, 0)
	} else {
		g.observe(now, p99, samples)
	}
	least := uint64(procsMinSamples)
	if wasIdle {
		least *= uint64(procsIdleWindow / procsWindow)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.idle = samples < least; g.idle {
		return procsIdleWindow
	}
	return procsWindow
}

// syncTime is the median time of procsSyncProbes synced 512-byte writes to one place of
// a scratch file in dir, as the transaction log syncs its appends.
func syncTime(dir string) (time.Duration, error) {
	f, err := os.CreateTemp(dir, ".sync-probe-")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	var block [512]byte
	took := make([]time.Duration, 0, procsSyncProbes)
	for range procsSyncProbes {
		start := time.Now()
		if _, err := f.WriteAt(block[:], 0); err != nil {
			return 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, err
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}

// schedWaits reads the runtime's histogram of how long goroutines ready to run waited,
// a window at a time.
type schedWaits struct {
	sample []metrics.Sample
	last   []uint64
}

func newSchedWaits() *schedWaits {
	w := &schedWaits{sample: []metrics.Sample{{Name: "/sched/latencies:seconds"}}}
	w.next()
	return w
}

// next returns the p99 of the waits since the last call (the lower bound of its bucket)
// and how many there were.
func (w *schedWaits) next() (time.Duration, uint64) {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0, 0
	}
	h := w.sample[0].Value.Float64Histogram()
	delta := make([]uint64, len(h.Counts))
	var total uint64
	for i, c := range h.Counts {
		if i < len(w.last) {
			delta[i] = c - w.last[i]
		} else {
			delta[i] = c
		}
		total += delta[i]
	}
	w.last = append(w.last[:0], h.Counts...)
	return percentileLow(delta, h.Buckets, 0.99, total), total
}

// percentileLow is the lower bound of the bucket that holds quantile q of counts
// (bucket i spans bounds[i] to bounds[i+1]), out of total.
func percentileLow(counts []uint64, bounds []float64, q float64, total uint64) time.Duration {
	if total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range counts {
		if seen += c; seen >= rank {
			low := bounds[i]
			if math.IsInf(low, -1) || low < 0 {
				return 0
			}
			return time.Duration(low * float64(time.Second))
		}
	}
	return 0
}
