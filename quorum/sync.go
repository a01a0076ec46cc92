package quorum

import "github.com/zkraft/zkraft/jute"

// Sync proposes a sync through the log and reports whether it was applied here:
// everything committed before it is then applied here too, as a ZooKeeper sync makes
// sure of.
func (n *Node) Sync() bool {
	return n.Propose(&Entry{Op: jute.OpSync, Req: &jute.SyncRequest{Path: "/"}}).Error() == nil
}
