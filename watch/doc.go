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
//
// # Memory layout
//
// A server may hold millions of watches, so the registry keeps one small record per
// (watcher, path) pair, whatever kinds the pair holds (a data and a child watch of one
// watcher on one path are one Kind bitmask):
//
//   - byPath maps each watched path to its watched entry (watched.go). The entry holds
//     the registry's only copy of the path, which is also the map's key and what the
//     watchers' lists point at, so a path watched by many watchers is stored once.
//   - An entry keeps its watchers as 12-byte slots (watcher id, kinds, index in the
//     watcher's list) in a slice grown one slot at a time, searched linearly; above
//     maxFew watchers it moves to a map by id, and back to a slice at maxFew/2.
//   - Each watcher has a small integer id (ids, reused once its last watch goes) and a
//     list of pointers to the entries it watches (lists[id]); a slot's index lets one
//     watch leave its watcher's list in O(1) by moving the last one into its place.
//
// For 1M watches (5 watchers, each with a data and a child watch on the same 100k
// paths) this is about 21 live heap bytes per watch (TestWatchMemory), against 56
// for the map-of-maps it replaced and 162 for ZooKeeper 3.8's WatchManager (its
// live heap after a full GC, TestZooKeeperWatchMemory), which keeps a HashSet per
// path and per watcher, in its data and its child manager, and a String per watch.
//
// Trigger, on the write path, looks the path up once, copies its few slots to the
// stack, and allocates only the event it delivers; a path nobody watches costs one map
// lookup.
package watch
