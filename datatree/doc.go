// Package datatree owns the znode tree and ZooKeeper's rules for it: paths, stats, node
// kinds (persistent, ephemeral, sequential, container, TTL, with ZooKeeper's
// ephemeralOwner bit layout), ACL checks, applying one write to the tree with the result
// and error code Apache ZooKeeper 3.8 would give (its PrepRequestProcessor checks, in
// their order, and its DataTree changes, quota bookkeeping and enforcement included),
// the watch events a change causes, the cleanup
// candidates the leader proposes, a digest to compare replicas, and the snapshot
// encoding of the tree.
//
// It is a pure, deterministic, single-writer library. It must not know about sockets,
// Raft, sessions' liveness, goroutines, locks or the wall clock: the caller serialises
// access (one writer, or readers under the FSM's lock), and every time value comes in a
// Txn that the leader stamped. Nothing that reaches a result, an event list, a snapshot
// or the digest depends on map iteration order or randomness. It imports only jute and
// the standard library, and it fires no watches: Apply returns the events and the watch
// layer decides who hears them.
//
// Memory is laid out for millions of znodes and for a collector that barely sees them
// (arena.go): node records hold no Go pointers and sit in pages, 80 bytes each (node.go);
// a node keeps its own name, not its path, in one blob with its data; children are kept
// as sorted chunks of node ids, so a node with 100k children inserts, deletes and looks
// up in logarithmic time plus a bounded copy (a list of several chunks keeps a copy of
// each chunk's last name, so finding the chunk reads nothing from the arena), a list
// of 32 to 4,096 children also keeps a hash index from name to id in the arena
// (nameindex.go), so a lookup reads one name instead of a binary search's dozen, and a
// longer one keeps each child's first 8 name bytes beside its id, so a search within a
// chunk reads a name only where those are equal (children.go); ACL
// lists are interned in a reference-counted cache (ZooKeeper's ReferenceCountedACLCache).
// Large pages and slabs come from the operating system, outside the Go heap. Everything
// the tree returns (data, names) is a copy.
package datatree
