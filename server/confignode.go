package server

import (
	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
)

// configShown is /zookeeper/config as a ZooKeeper 3.8 member shows it to a read.
//
// With reconfigEnabled=false a ZooKeeper ensemble never writes its membership through
// its log: each member puts its own static configuration into the node
// (ZKDatabase.initConfigInZKDatabase, called with the configuration's version as the
// zxid), and a zoo.cfg without a dynamic file has version 0, so the node reads
// "...\nversion=0" with mzxid 0. Only with reconfig enabled does the first leader give
// the configuration a version, the zxid that established it. zkraft's first leader
// always writes the membership as a log entry (the tree is the same on every member
// whatever each one's reconfigEnabled), and the entry's zxid is its version; with
// reconfig disabled, reads show it as ZooKeeper does: version 0, mzxid 0. A standalone
// server's node is empty on both and shown as it is.
func configShown(reconfigEnabled bool, data []byte, st jute.Stat) ([]byte, jute.Stat) {
	if reconfigEnabled || len(data) == 0 {
		return data, st
	}
	m, err := quorum.ParseMembership(string(data))
	if err != nil {
		return data, st
	}
	m.Version = 0
	data = []byte(m.String())
	st.Mzxid, st.DataLength = 0, int32(len(data))
	return data, st
}

// shownStat is path's stat as reads show it (see configShown).
func (c *conn) shownStat(t *datatree.Tree, path string, st jute.Stat) jute.Stat {
	if path != datatree.ConfigPath {
		return st
	}
	data, _, _ := t.Get(path)
	_, st = configShown(c.srv.cfg.ReconfigEnabled, data, st)
	return st
}
