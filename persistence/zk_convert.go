package persistence

import (
	"fmt"
	"io"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/session"
)

// ToState turns an imported ZooKeeper database into zkraft's state. Sessions keep their
// ids and timeouts and get the passwords ZooKeeper gave them (session.ZooKeeperPassword),
// so their clients can reconnect to zkraft; zxids, times and versions are kept as they are.
// Missing system nodes get the values datatree.New gives them. Quota stats are counted
// again, as ZooKeeper counts them when it loads a database.
func (st *ZKState) ToState(opts datatree.Options) (*State, error) {
	nodes := st.Nodes
	if !st.preordered {
		var err error
		if nodes, err = st.normalized(); err != nil {
			return nil, fmt.Errorf("persistence: %w", err)
		}
	}
	tree, err := datatree.FromNodes(nodes, opts)
	if err != nil {
		return nil, fmt.Errorf("persistence: imported tree: %w", err)
	}
	tree.RecomputeQuotas() // as ZooKeeper's setupQuota after loading its database
	table := session.NewTable()
	for _, s := range st.Sessions {
		table.Add(session.Session{ID: s.ID, Timeout: s.Timeout, Password: session.ZooKeeperPassword(s.ID)})
	}
	return &State{Zxid: st.LastZxid, Tree: tree, Sessions: table}, nil
}

// ZKStateOf turns zkraft's state into a ZooKeeper database, for a snapshot ZooKeeper
// can start from. Nodes come in pre-order; nothing may change the tree meanwhile.
func ZKStateOf(s *State) *ZKState {
	st := &ZKState{}
	s.Tree.Nodes(func(n datatree.StoredNode) { st.Nodes = append(st.Nodes, n) })
	for _, ss := range s.Sessions.All() {
		st.Sessions = append(st.Sessions, ZKSession{ID: ss.ID, Timeout: ss.Timeout})
	}
	st.LastZxid = s.Zxid
	return st
}

// KillDeadSessions deletes the ephemerals of sessions the state does not hold, as
// ZooKeeper does when it loads its data (ZooKeeperServer.loadData kills every session
// that owns an ephemeral but is not among the snapshot's sessions): an ephemeral whose
// session had gone when the snapshot was taken, or a node whose owner opts does not read
// as a TTL or a container (a 3.5.3 TTL node without zookeeper.emulate353TTLNodes). Each
// deletion sets its parent's pzxid to the state's zxid if that is higher (deleteNode at
// the last processed zxid); the parent's cversion is unchanged. It returns how many
// nodes went. A node with children is left (an ephemeral has none).
func (st *ZKState) KillDeadSessions(opts datatree.Options) int {
	live := make(map[int64]bool, len(st.Sessions))
	for _, s := range st.Sessions {
		live[s.ID] = true
	}
	var dead map[string]bool
	for _, n := range st.Nodes {
		if opts.SessionOwner(n.EphemeralOwner) && !live[n.EphemeralOwner] {
			if dead == nil {
				dead = map[string]bool{}
			}
			dead[n.Path] = true
		}
	}
	if len(dead) > 0 {
		for _, n := range st.Nodes {
			if parent, _, ok := zkSplitPath(n.Path); ok && dead[parent] {
				delete(dead, parent) // has a child: left
			}
		}
	}
	if len(dead) == 0 {
		return 0
	}
	parents := map[string]bool{}
	for p := range dead {
		parent, _, _ := zkSplitPath(p)
		parents[parent] = true
	}
	kept := st.Nodes[:0]
	for _, n := range st.Nodes {
		if dead[n.Path] {
			continue
		}
		if parents[n.Path] && st.LastZxid > n.Pzxid {
			n.Pzxid = st.LastZxid
		}
		kept = append(kept, n)
	}
	clear(st.Nodes[len(kept):])
	st.Nodes = kept
	return len(dead)
}

// WriteStateAsZooKeeper writes s as a ZooKeeper snapshot, a node at a time from a frozen
// view of its tree (no copy of the tree is made; nothing else may change it meanwhile),
// and returns how many nodes it wrote and how many of them are TTL nodes (which ZooKeeper
// reads as such only with zookeeper.extendedTypesEnabled).
func WriteStateAsZooKeeper(w io.Writer, s *State) (nodes, ttl int, err error) {
	fz, err := s.Tree.Freeze()
	if err != nil {
		return 0, 0, err
	}
	defer s.Tree.Thaw(fz)
	z, err := NewZKFrozenWriter(w, s.Sessions.All(), fz)
	for done := false; err == nil && !done; {
		done, err = z.Next(1024)
	}
	if err == nil {
		err = z.Close(s.Zxid)
	}
	return z.Nodes, z.TTLNodes, err
}

// A ZKFrozenWriter writes a frozen view of a tree as a ZooKeeper snapshot, a chunk of
// nodes per Next, so a caller that must keep changes out while the view is read (the
// FSM's read lock) holds them back a chunk at a time.
type ZKFrozenWriter struct {
	z  *zkSnapshotWriter
	fz *datatree.Frozen
	// Nodes and TTLNodes count what was written: TTL nodes are read as such by ZooKeeper
	// only with zookeeper.extendedTypesEnabled.
	Nodes, TTLNodes int
}

// NewZKFrozenWriter writes the snapshot's header, sessions and fz's ACL lists to w.
func NewZKFrozenWriter(w io.Writer, sessions []session.Session, fz *datatree.Frozen) (*ZKFrozenWriter, error) {
	zs := make([]ZKSession, len(sessions))
	for i, ss := range sessions {
		zs[i] = ZKSession{ID: ss.ID, Timeout: ss.Timeout}
	}
	z, err := newZKSnapshotWriter(w, zs, fz.ACLs())
	return &ZKFrozenWriter{z: z, fz: fz}, err
}

// Next writes up to max more nodes and reports whether every node is written.
func (f *ZKFrozenWriter) Next(max int) (done bool, err error) {
	done = f.fz.Nodes(max, func(n datatree.StoredNode, acl int) {
		if err == nil {
			err = f.z.Node(&n, acl)
			f.Nodes++
			if n.EphemeralOwner&zkExtendedMask == zkExtendedMask {
				f.TTLNodes++
			}
		}
	})
	return done, err
}

// Close ends the snapshot with lastZxid (zkSnapshotWriter.Close).
func (f *ZKFrozenWriter) Close(lastZxid int64) error { return f.z.Close(lastZxid) }
