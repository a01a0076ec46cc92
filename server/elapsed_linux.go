package server

import (
	"time"

	"golang.org/x/sys/unix"
)

// elapsedMillis is t on the clock Java's System.nanoTime reads on Linux (CLOCK_MONOTONIC,
// since boot), in milliseconds: the clock of the deadlines ZooKeeper's dump shows.
func elapsedMillis(t time.Time) int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return elapsedSinceStart(t)
	}
	return (ts.Nano() + int64(time.Until(t))) / int64(time.Millisecond)
}
