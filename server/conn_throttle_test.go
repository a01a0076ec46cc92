package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func throttleConfig(mod func(*ConnThrottleConfig)) ConnThrottleConfig {
	cfg := DefaultConnThrottle()
	mod(&cfg)
	return cfg
}

// The bucket empties by the tokens each ConnectRequest takes and refills by FillCount
// every FillTime, never past its size, as BlueThrottle's checkLimit.
func TestConnThrottleBucketRefills(t *testing.T) {
	th := newConnThrottle(throttleConfig(func(c *ConnThrottleConfig) { c.Tokens, c.FillTime, c.FillCount = 3, 100, 1 }), slog.Default())
	now := th.last
	for i := 0; i < 3; i++ {
		if !th.take(1, now) {
			t.Fatalf("token %d refused", i)
		}
	}
	if th.take(1, now+100) {
		t.Fatal("a token came back before more than FillTime passed")
	}
	if !th.take(1, now+250) || !th.take(1, now+250) || th.take(1, now+250) {
		t.Fatal("250 ms at one token per 100 ms did not give back exactly 2")
	}
	if !th.take(3, now+100_000) || th.take(1, now+100_000) {
		t.Fatal("a long pause filled the bucket past its size")
	}
}

// Weights: a new session takes GlobalWeight and a renewal RenewWeight of a bucket
// GlobalWeight times Tokens; weights BlueThrottle refuses are fixed as it fixes them,
// each with a warning.
func TestConnThrottleWeights(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	th := newConnThrottle(throttleConfig(func(c *ConnThrottleConfig) {
		c.Tokens, c.FillTime, c.WeightEnabled = 2, 1_000_000, true
		c.GlobalWeight, c.LocalWeight, c.RenewWeight = 0, 2, 1
	}), log)
	if th.max != 6 || th.newWeight != 3 || th.renewWeight != 2 {
		t.Fatalf("bucket %d, new %d, renew %d; want 6, 3 (the default for a weight of 0), 2 (the local weight)", th.max, th.newWeight, th.renewWeight)
	}
	if got := strings.Count(logs.String(), "level=WARN"); got != 2 {
		t.Fatalf("%d warnings, want 2:\n%s", got, logs.String())
	}
	if !th.admit(false) || !th.admit(true) || th.admit(true) {
		t.Fatal("6 tokens did not take a new session (3) and one renewal (2) only")
	}
	if requests, _, deficit := th.figures(); requests != 2 || deficit.sum.Load() != 3+5 || deficit.greatest() != 5 {
		t.Fatalf("requests %d, deficit sum %d max %d", requests, deficit.sum.Load(), deficit.greatest())
	}
	off := newConnThrottle(DefaultConnThrottle(), log)
	for i := 0; i < 100; i++ {
		if !off.admit(false) {
			t.Fatal("the throttle is off by default")
		}
	}
}

// BLUE: once the bucket has stayed empty past a freeze time the drop chance rises (here
// to 1: every request refused, even with tokens back), and falls again once little of
// the bucket is used.
func TestConnThrottleBlueDrop(t *testing.T) {
	th := newConnThrottle(throttleConfig(func(c *ConnThrottleConfig) {
		c.Tokens, c.FillTime, c.FillCount, c.FreezeTime = 1, 1000, 1, 10
		c.DropIncrease, c.DropDecrease = 1, 1
	}), slog.Default())
	now := th.last
	if !th.take(1, now) {
		t.Fatal("the first token refused")
	}
	if th.take(1, now+20) {
		t.Fatal("an empty bucket gave a token")
	}
	if _, drop, _ := th.figures(); drop != 1 {
		t.Fatalf("drop chance %v after the bucket stayed empty, want 1", drop)
	}
	th.tokens = 1 // refilled, but the drop chance holds until the next freeze time
	if th.take(1, now+25) {
		t.Fatal("taken with a drop chance of 1")
	}
	if !th.take(1, now+40) {
		t.Fatal("still dropped after the bucket was full for a freeze time")
	}
	if _, drop, _ := th.figures(); drop != 0 {
		t.Fatalf("drop chance %v, want 0", drop)
	}
}
