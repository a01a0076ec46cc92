// Package server owns the client side of zkraft: the TCP listener, one connection per
// client (reader, processor, responder and writer goroutines), the connect handshake,
// request dispatch, reads under the state machine's read lock, authentication, the
// four-letter words, the AdminServer and /metrics (three renderers of the facts
// facts.go gathers), and read-only mode (a member without a quorum serving read-only
// clients).
//
// It imports everything below it (quorum, datatree, watch, session, jute) and is
// imported only by cmd. Writes leave here as quorum entries; the server never changes
// the tree itself.
package server

// buildDate is set by the linker in release builds (-X).
var buildDate = "unknown"
