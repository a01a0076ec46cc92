package server

import (
	"log/slog"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// ConnThrottleConfig is ZooKeeper's connection throttle (BlueThrottle, 3.6+), read from
// the same system properties (zookeeper.connection_throttle_*): a bucket of tokens,
// refilled over time, of which each ConnectRequest takes some; a connection that finds
// too few is closed unanswered. Optionally BLUE's random drop, whose chance rises while
// the bucket stays empty. Off by default, as in ZooKeeper.
type ConnThrottleConfig struct {
	Tokens    int // connection_throttle_tokens: the bucket's size; 0, the default: off
	FillTime  int // connection_throttle_fill_time (ms, 1): FillCount tokens come back this often
	FillCount int // connection_throttle_fill_count (1)
	// FreezeTime (connection_throttle_freeze_time, ms; -1, the default: no random drop):
	// how often the drop chance may change, by DropIncrease (0.02) while the bucket is
	// empty and by DropDecrease (0.002) while no more than DecreaseRatio (0) of it is used.
	FreezeTime    int
	DropIncrease  float64
	DropDecrease  float64
	DecreaseRatio float64
	// WeightEnabled (connection_throttle_weight_enabled, false): a new session takes
	// GlobalWeight tokens (connection_throttle_global_session_weight, 3; zkraft's
	// sessions are all global), a renewed one RenewWeight (…renew_session_weight, 2),
	// and Tokens and FillCount count global sessions (so the bucket holds GlobalWeight
	// times as many). Otherwise every ConnectRequest takes one token.
	WeightEnabled bool
	GlobalWeight  int
	LocalWeight   int // …local_session_weight (1): the least a weight may be
	RenewWeight   int
}

// DefaultConnThrottle is ZooKeeper 3.8's: off.
func DefaultConnThrottle() ConnThrottleConfig {
	return ConnThrottleConfig{FillTime: 1, FillCount: 1, FreezeTime: -1, DropIncrease: 0.02, DropDecrease: 0.002,
		GlobalWeight: 3, LocalWeight: 1, RenewWeight: 2}
}

// connThrottle is the bucket. Its figures are ZooKeeper's ServerMetrics: requests let
// through (connection_request_count) and the deficit after each (connection_token_deficit).
type connThrottle struct {
	mu           sync.Mutex
	max, tokens  int
	fillTime     int64
	fillCount    int
	last         int64 // ms on the monotonic clock
	newWeight    int
	renewWeight  int
	freeze       int64
	lastFreeze   int64
	dropIncrease float64
	dropDecrease float64
	decrease     float64
	drop         float64
	rng          *rand.Rand

	requests int64
	deficit  summary
}

// newConnThrottle sets the bucket up from cfg as BlueThrottle does, fixing the weights
// it fixes with the warnings it logs.
func newConnThrottle(cfg ConnThrottleConfig, log *slog.Logger) *connThrottle {
	if cfg.Tokens == 0 {
		t := &connThrottle{} // off: it only counts
		t.deficit.plain = true
		return t
	}
	global, local, renew := cfg.GlobalWeight, cfg.LocalWeight, cfg.RenewWeight
	if local <= 0 {
		log.Warn("invalid connection_throttle_local_session_weight; it should be larger than 0", "weight", local)
		local = 1
	}
	global = sessionWeight(log, "global", global, 3, local)
	renew = sessionWeight(log, "renew", renew, 2, local)
	t := &connThrottle{max: cfg.Tokens, fillTime: int64(cfg.FillTime), fillCount: cfg.FillCount, newWeight: 1, renewWeight: 1,
		freeze: int64(cfg.FreezeTime), dropIncrease: cfg.DropIncrease, dropDecrease: cfg.DropDecrease, decrease: cfg.DecreaseRatio,
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))}
	t.deficit.plain = true // mntr prints no percentiles of it
	if cfg.WeightEnabled {
		t.max *= global
		t.fillCount *= global
		t.newWeight, t.renewWeight = global, renew
	}
	t.tokens = t.max
	t.last = throttleNow()
	t.lastFreeze = t.last
	return t
}

// sessionWeight is weight w of a kind of session as BlueThrottle fixes it: the default
// def if it is not positive, the local weight if it is below that.
func sessionWeight(log *slog.Logger, kind string, w, def, local int) int {
	key := "connection_throttle_" + kind + "_session_weight"
	switch {
	case w <= 0:
		log.Warn("invalid "+key+"; it should be larger than 0", "weight", w)
		return def
	case w < local:
		log.Warn(key+" is less than the local session weight; the local session weight is used", "weight", w, "local", local)
		return local
	}
	return w
}

// throttleNow is the monotonic clock in ms, BlueThrottle's Time.currentElapsedTime.
func throttleNow() int64 { return time.Since(monotonicStart).Milliseconds() }

// admit takes the tokens a ConnectRequest needs (renew: it names an existing session);
// false refuses it.
func (t *connThrottle) admit(renew bool) bool {
	need := t.newWeight
	if renew {
		need = t.renewWeight
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.max != 0 && !t.take(need, throttleNow()) {
		return false
	}
	t.deficit.record(int64(t.max - t.tokens))
	t.requests++
	return true
}

func (t *connThrottle) take(need int, now int64) bool {
	if diff := now - t.last; diff > t.fillTime {
		refill := diff * int64(t.fillCount) / max(t.fillTime, 1)
		t.tokens = int(min(int64(t.tokens)+refill, int64(t.max)))
		t.last = now
	}
	if t.freeze != -1 && !t.blue(now) {
		return false
	}
	if t.tokens < need {
		return false
	}
	t.tokens -= need
	return true
}

// blue is BLUE's random drop: its chance rises while the bucket stays empty and falls
// while little of it is used, at most once per freeze time.
func (t *connThrottle) blue(now int64) bool {
	used := t.max - t.tokens
	if now-t.lastFreeze > t.freeze {
		if used == t.max && t.drop < 1 {
			t.drop = math.Min(t.drop+t.dropIncrease, 1)
		} else if float64(used) <= math.Round(float64(t.max)*t.decrease) && t.drop > 0 {
			t.drop = math.Max(t.drop-t.dropDecrease, 0)
		}
		t.lastFreeze = now
	}
	return t.rng.Float64() >= t.drop
}

// figures are mntr's: connection_request_count, connection_drop_probability and the
// connection_token_deficit summary.
func (t *connThrottle) figures() (requests int64, drop float64, deficit *summary) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requests, t.drop, &t.deficit
}

// reset zeroes the counters (srst: ServerMetrics.resetAll); the bucket stays.
func (t *connThrottle) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests = 0
	t.deficit.reset()
}
