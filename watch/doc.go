// Package watch owns the watch registry of one server: one-shot data and child watches
// (exists on a missing node is a data watch, as in ZooKeeper), persistent and
// persistent-recursive watches, their triggering by the events a change causes, and their
// removal (removeWatches, checkWatches, a connection going away). One watcher may hold
// watches of several kinds on one path, and remove them one kind at a time, by ZooKeeper
// 3.9's rules; an event goes only to watchers that may read its node.
//
// It knows nothing of trees, sessions, sockets or Raft. Watchers are whatever implements
// Watcher (the server's connections); the registry calls Notify while the caller holds
// the state machine's lock, so Notify must never block.
package watch
