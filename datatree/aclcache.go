package datatree

import "github.com/zkraft/zkraft/jute"

// aclRef is an index into the tree's ACL cache.
type aclRef uint32

// aclCache interns ACL lists with reference counts (ZooKeeper's
// ReferenceCountedACLCache), so a million nodes sharing one ACL share one list. Refs
// are internal: snapshots and the digest use the lists themselves, so two replicas
// with the same content agree whatever order their refs were handed out in.
type aclCache struct {
	lists [][]jute.ACL
	keys  []string
	refs  []int64
	byKey map[string]aclRef
	free  []aclRef
}

func newACLCache() *aclCache { return &aclCache{byKey: map[string]aclRef{}} }

// aclKey is a canonical encoding of a list (order matters, as List.equals does).
func aclKey(acl []jute.ACL) string {
	e := jute.Encoder{}
	e.Int(int32(len(acl)))
	for i := range acl {
		acl[i].Encode(&e)
	}
	return string(e.Buf)
}

// acquire returns the ref of acl, interning a copy if it is new, and counts one use.
func (c *aclCache) acquire(acl []jute.ACL) aclRef {
	key := aclKey(acl)
	if r, ok := c.byKey[key]; ok {
		c.refs[r]++
		return r
	}
	list := append([]jute.ACL(nil), acl...)
	var r aclRef
	if n := len(c.free); n > 0 {
		r = c.free[n-1]
		c.free = c.free[:n-1]
		c.lists[r], c.keys[r], c.refs[r] = list, key, 1
	} else {
		r = aclRef(len(c.lists))
		c.lists = append(c.lists, list)
		c.keys = append(c.keys, key)
		c.refs = append(c.refs, 1)
	}
	c.byKey[key] = r
	return r
}

// addRef counts one more use of r, which is in use.
func (c *aclCache) addRef(r aclRef) { c.refs[r]++ }

// release drops one use of r and forgets the list when nobody uses it.
func (c *aclCache) release(r aclRef) {
	c.refs[r]--
	if c.refs[r] > 0 {
		return
	}
	delete(c.byKey, c.keys[r])
	c.lists[r], c.keys[r] = nil, ""
	c.free = append(c.free, r)
}

func (c *aclCache) get(r aclRef) []jute.ACL { return c.lists[r] }

// size is the number of distinct lists in use.
func (c *aclCache) size() int { return len(c.byKey) }
