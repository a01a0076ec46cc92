package datatree

import (
	"encoding/binary"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// chunkMax bounds one sorted chunk: inserting or deleting copies at most this many ids,
// and the chunk index is 1/chunkMax of the children.
const chunkMax = 512

// children is the sorted set of a node's children (their ids, ordered by name), split
// into sorted chunks so that a node with very many children never pays a copy of all of
// them per change. Chunks are non-empty and ordered: every name in chunks[i] sorts
// before every name in chunks[i+1]. Names are read from the tree, except what wide
// holds for a list of more than one chunk. wide is nil while there is one chunk, so a
// small list costs one pointer more.
type children struct {
	chunks [][]nodeID
	wide   *wideList
	n      int
	index  *nameIndex // for indexMin..indexMax children (nameindex.go)
}

// wideList is what a list of more than one chunk keeps beside its chunks, so that a
// search reads few names from the arena (each read there is two cache misses, and a
// parent of 100k children took a dozen of them a lookup):
//   - lasts, a copy of each chunk's last name, and lastKeys, their prefix keys:
//     finding the chunk reads no name from the arena, and compares a copy only where
//     its key equals the one sought;
//   - keys, while the list has no name index (beyond indexMax children, where every
//     lookup and every add searches the chunks; also below indexMin/2 children, until
//     the list has indexMin again): each child's prefix key, parallel to
//     the chunks. A search within a chunk compares keys and reads a name only where a
//     key equals the one sought. A create under a parent of 240k children spent 10% of
//     the server's CPU (256 sessions) searching a chunk of up to 512 ids, nine names.
type wideList struct {
	lasts    []string
	lastKeys []uint64   // prefixKey of each of lasts
	keys     [][]uint64 // nil, or one slice per chunk, as long as the chunk
}

// setLast records name, a copy of it, as chunk i's last.
func (w *wideList) setLast(i int, name string) {
	w.lasts[i] = strings.Clone(name)
	w.lastKeys[i] = prefixKey(name)
}

// prefixKey is name's first 8 bytes, big-endian, zero-padded. Keys order as their names
// do where they differ (a shorter name padded with zeros sorts before a longer one it
// begins), so only equal keys need the names compared. Names that share their first 8
// bytes (a recipe's "lock-0000000123", "member_0000000042") all have one key: a search
// among them reads every probe's name, as it did without keys.
func prefixKey(name string) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

func (t *Tree) nameOf(id nodeID) string { return t.name(t.mem.node(id)) }

// chunkFor returns the index of the chunk that holds or would hold name: the first
// chunk whose last name is >= name, the last chunk if none.
func (c *children) chunkFor(name string) int {
	if c.wide == nil {
		return 0 // one chunk
	}
	lasts, keys, k := c.wide.lasts, c.wide.lastKeys, prefixKey(name)
	i := sort.Search(len(lasts), func(i int) bool {
		if keys[i] != k {
			return keys[i] > k
		}
		return lasts[i] >= name
	})
	return min(i, len(lasts)-1)
}

// setLast records chunk i's last name, while the list is wide.
func (c *children) setLast(t *Tree, i int) {
	if c.wide != nil {
		ch := c.chunks[i]
		c.wide.setLast(i, t.nameOf(ch[len(ch)-1]))
	}
}

// search is where name is or would go in chunk i, and whether it is there.
func (c *children) search(t *Tree, i int, name string) (int, bool) {
	ch := c.chunks[i]
	if c.wide == nil || c.wide.keys == nil {
		j := sort.Search(len(ch), func(j int) bool { return t.nameOf(ch[j]) >= name })
		return j, j < len(ch) && t.nameOf(ch[j]) == name
	}
	keys, k := c.wide.keys[i], prefixKey(name)
	j := sort.Search(len(ch), func(j int) bool {
		if keys[j] != k {
			return keys[j] > k
		}
		return t.nameOf(ch[j]) >= name
	})
	return j, j < len(ch) && keys[j] == k && t.nameOf(ch[j]) == name
}

// fitKeys gives a wide list without a name index its keys and takes them from any
// other list; it is called wherever either of the two may have changed.
func (c *children) fitKeys(t *Tree) {
	switch want := c.wide != nil && c.index == nil && !t.loading; {
	case want && c.wide.keys == nil:
		keys := make([][]uint64, len(c.chunks))
		for i, ch := range c.chunks {
			keys[i] = make([]uint64, len(ch), cap(ch))
			for j, id := range ch {
				keys[i][j] = prefixKey(t.nameOf(id))
			}
		}
		c.wide.keys = keys
	case !want && c.wide != nil:
		c.wide.keys = nil
	}
}

func (c *children) get(t *Tree, name string) nodeID {
	if c == nil || c.n == 0 {
		return 0
	}
	id, _ := c.find(t, name)
	return id
}

// childPlace is what locate found for a name: the child's id (0 if the name is absent)
// and, when a search of the chunks answered, where the name is or would go, the chunk
// and the position in it. ok is false when no search placed it (a list with a name
// index, or no locate: insert or unlink then searches, unlink among one chunk's ids when
// the id is known). It holds only until the list changes.
type childPlace struct {
	chunk, pos int
	ok         bool
	id         nodeID
}

// locate returns the id of the child called name (0 if there is none) and, when a
// search of the chunks answered, where the name is or would go: a create then inserts
// there and a delete unlinks there, each searching the chunks once, not twice. (Each
// comparison may read a name from the arena. In a multi cell whose parent held 100k+
// children, beyond the name index, insert's own search was 4.1% of the CPU, 1.0% with
// the place passed on: docs/benchmarks.md, thirty-seventh session.) A list with a name
// index answers from it; unlink then finds the id among one chunk's ids, reading no name.
func (c *children) locate(t *Tree, name string) (nodeID, childPlace) {
	if c == nil || c.n == 0 || c.sortsLast(t, name) {
		return 0, childPlace{}
	}
	return c.find(t, name)
}

// find is locate's answer from the name index or a search of the chunks, for a list
// that is not empty (get, which need not place a name, skips locate's look at the last).
func (c *children) find(t *Tree, name string) (nodeID, childPlace) {
	if c.index != nil {
		id := c.index.get(t, name)
		return id, childPlace{id: id}
	}
	i := c.chunkFor(name)
	j, found := c.search(t, i, name)
	var id nodeID
	if found {
		id = c.chunks[i][j]
	}
	return id, childPlace{chunk: i, pos: j, ok: true, id: id}
}

// add inserts id, called name, at at if locate placed it; the caller has checked that
// the name is absent.
func (c *children) add(t *Tree, id nodeID, name string, at childPlace) {
	c.n++
	c.insert(t, id, name, at)
	c.indexAdd(t, id, name)
}

// insert puts id, called name, in its place in the chunks: at, if locate placed it.
func (c *children) insert(t *Tree, id nodeID, name string, at childPlace) {
	if len(c.chunks) == 0 {
		c.chunks = append(c.chunks, []nodeID{id})
		return
	}
	// Appending is the common case (sequential nodes, snapshots in name order).
	i := len(c.chunks) - 1
	j := len(c.chunks[i])
	switch {
	case at.ok:
		i, j = at.chunk, at.pos
	case !c.sortsLast(t, name):
		i = c.chunkFor(name)
		j, _ = c.search(t, i, name)
	}
	ch := slices.Insert(c.chunks[i], j, id)
	var keys []uint64
	if c.wide != nil && c.wide.keys != nil {
		keys = slices.Insert(c.wide.keys[i], j, prefixKey(name))
	}
	if len(ch) <= chunkMax {
		c.chunks[i] = ch
		if keys != nil {
			c.wide.keys[i] = keys
		}
		if j == len(ch)-1 && c.wide != nil {
			c.wide.setLast(i, name)
		}
		return
	}
	// Split in two halves; fresh slices so neither aliases the other.
	half := len(ch) / 2
	c.chunks = slices.Insert(c.chunks, i+1, halfOf(ch[half:]))
	c.chunks[i] = halfOf(ch[:half])
	if c.wide == nil {
		c.wide = &wideList{lasts: make([]string, len(c.chunks)), lastKeys: make([]uint64, len(c.chunks))}
		for k := range c.chunks {
			c.setLast(t, k)
		}
		c.fitKeys(t)
		return
	}
	c.wide.lasts = slices.Insert(c.wide.lasts, i+1, "")
	c.wide.lastKeys = slices.Insert(c.wide.lastKeys, i+1, 0)
	c.setLast(t, i)
	c.setLast(t, i+1)
	if keys != nil {
		c.wide.keys = slices.Insert(c.wide.keys, i+1, halfOf(keys[half:]))
		c.wide.keys[i] = halfOf(keys[:half])
	}
}

// halfOf copies half of a chunk that split (or of its keys) into a slice of its own,
// with room to grow to chunkMax.
func halfOf[E nodeID | uint64](half []E) []E { return append(make([]E, 0, chunkMax), half...) }

// sortsLast reports whether name sorts after every child (so it is not one of them).
func (c *children) sortsLast(t *Tree, name string) bool {
	if c.len() == 0 {
		return true
	}
	if c.wide != nil {
		lasts := c.wide.lasts
		return lasts[len(lasts)-1] < name
	}
	last := c.chunks[len(c.chunks)-1]
	return t.nameOf(last[len(last)-1]) < name
}

// remove deletes the child called name, at at if locate placed it (and found it), and
// returns its id (0 if it was not there).
func (c *children) remove(t *Tree, name string, at childPlace) nodeID {
	if c == nil || c.n == 0 {
		return 0
	}
	id := c.unlink(t, name, at)
	if id != 0 {
		c.indexRemove(t, id, name)
	}
	return id
}

// unlink takes the child called name (at at, if locate placed it) out of the chunks
// and returns its id (0 if it was not there).
func (c *children) unlink(t *Tree, name string, at childPlace) nodeID {
	if !at.ok && at.id == 0 {
		_, at = c.find(t, name) // no place given (or an absent name's): look now
	}
	i, j := at.chunk, at.pos
	switch {
	case at.id == 0:
		return 0
	case !at.ok: // found by the name index: the id among the ids of the chunk that holds it
		i = c.chunkFor(name)
		if j = slices.Index(c.chunks[i], at.id); j < 0 {
			return 0
		}
	}
	ch := c.chunks[i]
	id := ch[j]
	ch = slices.Delete(ch, j, j+1)
	c.n--
	keyed := c.wide != nil && c.wide.keys != nil
	if keyed {
		c.wide.keys[i] = slices.Delete(c.wide.keys[i], j, j+1)
	}
	if len(ch) == 0 {
		c.chunks = slices.Delete(c.chunks, i, i+1)
		if c.wide != nil {
			c.wide.lasts = slices.Delete(c.wide.lasts, i, i+1)
			c.wide.lastKeys = slices.Delete(c.wide.lastKeys, i, i+1)
			if keyed {
				c.wide.keys = slices.Delete(c.wide.keys, i, i+1)
			}
			if len(c.chunks) <= 1 {
				c.wide = nil
			}
		}
		return id
	}
	c.chunks[i] = ch
	if j == len(ch) {
		c.setLast(t, i) // the removed child was the chunk's last
	}
	return id
}

// each calls f for every child in name order until f returns false.
func (c *children) each(f func(nodeID) bool) {
	if c == nil {
		return
	}
	for _, ch := range c.chunks {
		for _, id := range ch {
			if !f(id) {
				return
			}
		}
	}
}

// ids returns the children in name order, in a fresh slice.
func (c *children) ids() []nodeID {
	if c.len() == 0 {
		return nil
	}
	out := make([]nodeID, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}

func (c *children) len() int {
	if c == nil {
		return 0
	}
	return c.n
}

// childrenBytes is the size of one entry of the child table.
const childrenBytes = unsafe.Sizeof(children{})
