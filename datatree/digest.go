package datatree

import (
	"hash/fnv"

	"github.com/zkraft/zkraft/jute"
)

// Digest is a 64-bit FNV-1a hash over every node in pre-order with children in name
// order: path, data (null and empty differ), the stored stat (stored cversion and
// ephemeralOwner as kept, not as clients see them) and the ACL list itself, then, if
// quotas are enforced, one byte more (so a tree without the setting hashes as before). Two
// replicas that applied the same entries agree; map order, ACL cache refs and memory
// layout do not enter it.
func (t *Tree) Digest() uint64 {
	h := fnv.New64a()
	e := jute.Encoder{}
	t.walk(func(path string, n *node) {
		e.Buf = e.Buf[:0]
		e.String(path)
		e.Buffer(t.data(n))
		st := n.stat()
		encodeStat(&e, &st)
		e.Buf = append(e.Buf, t.acls.keys[n.acl]...)
		h.Write(e.Buf)
	})
	if t.enforceQuota {
		h.Write([]byte{1})
	}
	return h.Sum64()
}

func encodeStat(e *jute.Encoder, s *storedStat) {
	e.Long(s.Czxid)
	e.Long(s.Mzxid)
	e.Long(s.Ctime)
	e.Long(s.Mtime)
	e.Long(s.Pzxid)
	e.Long(s.EphemeralOwner)
	e.Int(s.Version)
	e.Int(s.Cversion)
	e.Int(s.Aversion)
}
