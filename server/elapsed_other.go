//go:build !linux

package server

import "time"

// elapsedMillis is t in milliseconds since the process started: a monotonic clock, as
// the deadlines ZooKeeper's dump shows are on one.
func elapsedMillis(t time.Time) int64 { return elapsedSinceStart(t) }
