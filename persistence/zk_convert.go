package persistence

import (
	"bytes"
	"fmt"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/session"
)

// ToState turns an imported ZooKeeper database into zkraft's state. Sessions keep their
// ids and timeouts and get the passwords ZooKeeper gave them (session.ZooKeeperPassword),
// so their clients can reconnect to zkraft; zxids, times and versions are kept as they are.
func (st *ZKState) ToState(opts datatree.Options) (*State, error) {
	var b bytes.Buffer
	if err := st.TreeSnapshot(&b); err != nil {
		return nil, err
	}
	tree, err := datatree.ReadSnapshot(&b, opts)
	if err != nil {
		return nil, fmt.Errorf("persistence: imported tree: %w", err)
	}
	table := session.NewTable()
	for _, s := range st.Sessions {
		table.Add(session.Session{ID: s.ID, Timeout: s.Timeout, Password: session.ZooKeeperPassword(s.ID)})
	}
	return &State{Zxid: st.LastZxid, Tree: tree, Sessions: table}, nil
}

// ZKStateOf turns zkraft's state into a ZooKeeper database, for a snapshot ZooKeeper
// can start from. (The tree is written through a Frozen view: the caller owns it.)
func ZKStateOf(s *State) (*ZKState, error) {
	var b bytes.Buffer
	if err := s.Tree.WriteSnapshot(&b); err != nil {
		return nil, err
	}
	st, err := StateFromTreeSnapshot(&b)
	if err != nil {
		return nil, err
	}
	for _, ss := range s.Sessions.All() {
		st.Sessions = append(st.Sessions, ZKSession{ID: ss.ID, Timeout: ss.Timeout})
	}
	st.LastZxid = s.Zxid
	return st, nil
}
