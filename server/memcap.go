package server

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/session"
)

// memSampleEvery is how often the tree's size is sampled for the memory cap: the tree
// can grow past the cap by what is written in this time.
const memSampleEvery = 50 * time.Millisecond

// memCap refuses writes that would grow the tree once the memory its content takes
// (datatree's MemoryInUse: node records, names and data as the tree lays them out) has
// reached Config.TreeMemoryLimit. The member that receives a write decides, before proposing
// it, from its own copy of the tree: with the same limit on every member, the tree
// stops growing at the limit wherever its clients write. Reads, deletes, shrinking
// writes and sessions are never refused.
type memCap struct {
	limit   int64
	bytes   atomic.Int64 // the last sample
	sampled atomic.Int64 // when, in UnixNano
	refused atomic.Int64
	logged  atomic.Int64 // when a refusal was last logged, in UnixNano: at most one line a second
}

// treeBytes is what the cap compares with its limit.
func treeBytes(t *datatree.Tree) int64 { return t.MemoryInUse() }

// overMemoryCap reports whether p would grow a tree that has reached the cap.
func (c *conn) overMemoryCap(p *pending) bool {
	m := &c.srv.memCap
	if m.limit <= 0 || !growthOp(p.op) {
		return false
	}
	now := time.Now().UnixNano()
	if last := m.sampled.Load(); now-last > int64(memSampleEvery) && m.sampled.CompareAndSwap(last, now) {
		c.srv.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { m.bytes.Store(treeBytes(t)) })
	}
	if m.bytes.Load() < m.limit {
		return false
	}
	grows := false
	c.srv.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { grows = growsTree(t, p.op, p.req) })
	if grows {
		m.refused.Add(1)
		if last := m.logged.Load(); now-last < int64(time.Second) || !m.logged.CompareAndSwap(last, now) {
			return true
		}
		c.srv.log.Warn("write refused: the tree has reached its memory cap", "client", c.nc.RemoteAddr().String(),
			"session", fmt.Sprintf("0x%x", c.sessionID()), "treeBytes", m.bytes.Load(), "limit", m.limit)
	}
	return grows
}

// growthOp: the ops that can add bytes to the tree.
func growthOp(op int32) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL, jute.OpSetData, jute.OpMulti:
		return true
	}
	return false
}

// growsTree reports whether req would add bytes: any create, a setData longer than the
// node's data (a setData of a missing node fails anyway and is let through to fail as
// usual), a multi holding either.
func growsTree(t *datatree.Tree, op int32, req jute.Record) bool {
	switch op {
	case jute.OpCreate, jute.OpCreate2, jute.OpCreateContainer, jute.OpCreateTTL:
		return true
	case jute.OpSetData:
		r := req.(*jute.SetDataRequest)
		st, code := t.Stat(r.Path)
		return code == jute.OK && len(r.Data) > int(st.DataLength)
	case jute.OpMulti:
		for _, o := range req.(*jute.MultiRequest).Ops {
			if growsTree(t, o.Type, o.Req) {
				return true
			}
		}
	}
	return false
}
