package datatree

import (
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"sort"

	"github.com/zkraft/zkraft/jute"
)

// A Frozen is the tree as it was at Freeze, to be written out while the tree goes on
// changing: snapshots that do not stop writes. Freezing costs a copy of the ACL table;
// from then on the first change to a node (its data, stat, ACL or children) saves the
// node's frozen version in the Frozen (copy on write, once per node), and the walk reads
// the saved version where there is one and the live node where there is none. A node
// created after Freeze is reached by no frozen child list, and a node deleted after it
// stays reachable from its parent's saved list. The memory a change lets go of (a deleted
// node's id, replaced data) is kept until Thaw, so the saved versions stay readable.
//
// The tree stays single-writer: Freeze, Thaw and every change run under the caller's
// write exclusion, and each Next call under at least its read exclusion (no change runs
// during a Next). Between Next calls the changes go on.
type Frozen struct {
	t        *Tree
	saved    map[*node]frozenNode
	acls     [][]jute.ACL      // the ACL lists in use at Freeze, in key order
	index    map[aclRef]uint32 // ref at Freeze -> position in acls
	count    int64
	settings uint32 // the snapshot's settings word, as at Freeze
	stack    []frame
	e        jute.Encoder
	scratch  []byte // Nodes' copy of a node's data
	crc      hash.Hash32
	began    bool
	done     bool
}

type frozenNode struct {
	rec  node     // the record as it was: name, data, stat and ACL
	kids []nodeID // in name order
}

// frame is one node's frozen children still to write, and its path.
type frame struct {
	kids []nodeID
	next int
	path string
}

// ErrFrozen is returned by Freeze while another Frozen is open.
var ErrFrozen = errors.New("datatree: a snapshot is already being written")

// Freeze starts a frozen view of the tree (see Frozen).
func (t *Tree) Freeze() (*Frozen, error) {
	if t.frozen != nil {
		return nil, ErrFrozen
	}
	f := &Frozen{t: t, saved: map[*node]frozenNode{}, index: map[aclRef]uint32{}, count: int64(t.nodes),
		crc: crc32.New(crcTable)}
	// In the order of their canonical keys, so the encoding depends only on content.
	// (An empty list is in use too, though interned as nil: take the refs from the keys.)
	refs := make([]aclRef, 0, t.acls.size())
	for _, r := range t.acls.byKey {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return t.acls.keys[refs[i]] < t.acls.keys[refs[j]] })
	for i, r := range refs {
		f.index[r] = uint32(i)
		f.acls = append(f.acls, t.acls.lists[r])
	}
	if t.enforceQuota {
		f.settings |= settingEnforceQuota
	}
	t.frozen = f
	return f, nil
}

// Thaw ends the frozen view: changes stop saving frozen versions.
func (t *Tree) Thaw(f *Frozen) {
	if t.frozen == f {
		t.frozen = nil
		for _, fr := range t.frozenFrees {
			t.freeNow(fr)
		}
		t.frozenFrees = nil
	}
	f.saved = nil
}

// touch saves n's frozen version before its first change while a Frozen is open.
func (t *Tree) touch(n *node) {
	f := t.frozen
	if f == nil {
		return
	}
	if _, ok := f.saved[n]; ok {
		return
	}
	f.saved[n] = frozenNode{rec: *n, kids: t.kidsOf(n).ids()}
}

// view is n as it was at Freeze.
func (f *Frozen) view(n *node) frozenNode {
	if v, ok := f.saved[n]; ok {
		return v
	}
	return frozenNode{rec: *n, kids: f.t.kidsOf(n).ids()}
}

// Next encodes up to max more nodes in the snapshot format (see snapshot.go) and returns
// the bytes, which stay valid until the next call; done is true with the last bytes
// (the checksum). The caller keeps changes out while Next runs.
func (f *Frozen) Next(max int) (out []byte, done bool) {
	f.e.Buf = f.e.Buf[:0]
	if f.done {
		return nil, true
	}
	if !f.began {
		f.header()
	}
	f.walk(max, f.node)
	f.crc.Write(f.e.Buf)
	if f.done {
		f.e.Buf = binary.BigEndian.AppendUint32(f.e.Buf, f.crc.Sum32())
	}
	return f.e.Buf, f.done
}

// ACLs are the ACL lists in use at Freeze; Nodes gives each node's as an index into them.
func (f *Frozen) ACLs() [][]jute.ACL { return f.acls }

// Nodes calls fn with up to max more nodes, in pre-order with children in name order, as
// they were at Freeze, and reports whether the walk is over. A node's Data is a copy in a
// buffer the next node reuses (valid only during fn; never the tree's memory), and its
// ACL field is left nil: acl indexes ACLs. The caller keeps changes out while Nodes runs.
// A Frozen is walked by Next or by Nodes, not both.
func (f *Frozen) Nodes(max int, fn func(n StoredNode, acl int)) (done bool) {
	f.walk(max, func(path string, v frozenNode) {
		st := v.rec.stat()
		data := f.t.data(&v.rec)
		if len(data) > 0 {
			f.scratch = append(f.scratch[:0], data...)
			data = f.scratch
		}
		fn(StoredNode{Path: path, Data: data,
			Czxid: st.Czxid, Mzxid: st.Mzxid, Ctime: st.Ctime, Mtime: st.Mtime, Pzxid: st.Pzxid,
			EphemeralOwner: st.EphemeralOwner, Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion},
			int(f.index[v.rec.acl]))
	})
	return f.done
}

// walk visits up to max more nodes after the root (which the first call visits first),
// and sets done once every node was visited.
func (f *Frozen) walk(max int, visit func(path string, v frozenNode)) {
	if f.done {
		return
	}
	if !f.began {
		f.began = true
		root := f.view(f.t.root)
		visit("/", root)
		f.stack = append(f.stack, frame{kids: root.kids, path: ""})
	}
	for written := 0; written < max && len(f.stack) > 0; {
		top := &f.stack[len(f.stack)-1]
		if top.next == len(top.kids) {
			f.stack = f.stack[:len(f.stack)-1]
			continue
		}
		v := f.view(f.t.mem.node(top.kids[top.next]))
		top.next++
		path := top.path + "/" + f.t.name(&v.rec)
		visit(path, v)
		written++
		if len(v.kids) > 0 {
			f.stack = append(f.stack, frame{kids: v.kids, path: path})
		}
	}
	f.done = len(f.stack) == 0
}

// header writes the magic, the version and the ACL table: every list in use at Freeze,
// in the order of their canonical keys.
func (f *Frozen) header() {
	e := &f.e
	e.Buf = append(e.Buf, snapshotMagic...)
	if f.settings == 0 {
		e.Int(1) // what a version without settings reads, as long as none is on
	} else {
		e.Int(snapshotVersion)
		e.Int(int32(f.settings))
	}
	e.Int(int32(len(f.acls)))
	for _, l := range f.acls {
		e.Int(int32(len(l)))
		for i := range l {
			l[i].Encode(e)
		}
	}
	e.Long(f.count)
}

func (f *Frozen) node(path string, v frozenNode) {
	f.e.String(path)
	f.e.Buffer(f.t.data(&v.rec))
	st := v.rec.stat()
	encodeStat(&f.e, &st)
	f.e.Int(int32(f.index[v.rec.acl]))
}
