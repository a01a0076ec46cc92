package persistence

import (
	"fmt"

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
