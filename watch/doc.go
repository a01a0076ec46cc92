// Package watch owns the watch registry of one server: one-shot data and child watches
// (exists on a missing node is a data watch, as in ZooKeeper), persistent and
// persistent-recursive watches, their triggering by the events a change causes, and their
// removal (removeWatches, checkWatches, a connection going away).
//
// It knows nothing of trees, sessions, sockets or Raft. Watchers are whatever implements
// Watcher (the server's connections); the registry calls Notify while the caller holds
// the state machine's lock, so Notify must never block.
package watch
