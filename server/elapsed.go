package server

import "time"

// javaDateLayout is how Java's Date.toString prints a time (ZooKeeper's dump does).
const javaDateLayout = "Mon Jan 02 15:04:05 MST 2006"

// processStart anchors elapsedSinceStart.
var processStart = time.Now()

// elapsedSinceStart is t in milliseconds since the process started.
func elapsedSinceStart(t time.Time) int64 { return t.Sub(processStart).Milliseconds() }
