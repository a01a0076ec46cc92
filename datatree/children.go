package datatree

import (
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
// before every name in chunks[i+1]. Names are read from the tree, except the last name
// of each chunk of a list of more than one chunk: lasts holds a copy of those, so finding
// the chunk reads no name from the arena (each read there is two cache misses, and a
// parent of 100k children took a dozen of them a lookup). lasts is nil while there is
// one chunk, so a small list costs one pointer more.
type children struct {
	chunks [][]nodeID
	lasts  *[]string
	n      int
	index  *nameIndex // for indexMin..indexMax children (nameindex.go)
}

func (t *Tree) nameOf(id nodeID) string { return t.name(t.mem.node(id)) }

// chunkFor returns the index of the chunk that holds or would hold name: the first
// chunk whose last name is >= name, the last chunk if none.
func (c *children) chunkFor(name string) int {
	if c.lasts == nil {
		return 0 // one chunk
	}
	lasts := *c.lasts
	if i := sort.SearchStrings(lasts, name); i < len(lasts) {
		return i
	}
	return len(lasts) - 1
}

// setLast records chunk i's last name, while there are lasts.
func (c *children) setLast(t *Tree, i int) {
	if c.lasts != nil {
		ch := c.chunks[i]
		(*c.lasts)[i] = strings.Clone(t.nameOf(ch[len(ch)-1]))
	}
}

func searchChunk(t *Tree, ch []nodeID, name string) (int, bool) {
	j := sort.Search(len(ch), func(j int) bool { return t.nameOf(ch[j]) >= name })
	return j, j < len(ch) && t.nameOf(ch[j]) == name
}

func (c *children) get(t *Tree, name string) nodeID {
	if c == nil || c.n == 0 {
		return 0
	}
	if c.index != nil {
		return c.index.get(t, name)
	}
	ch := c.chunks[c.chunkFor(name)]
	if j, ok := searchChunk(t, ch, name); ok {
		return ch[j]
	}
	return 0
}

// childPlace is where a name that a search of the chunks found absent goes: the chunk
// and the position in it. ok is false when no search placed it (insert then searches).
// It holds only until the list changes.
type childPlace struct {
	chunk, pos int
	ok         bool
}

// find reports whether name is a child, and, when it is not and a search of the chunks
// said so, where it goes, for add: a create then searches the chunks once, not twice.
// (Each comparison reads a name from the arena. In a multi cell whose parent holds
// 100k+ children, beyond the name index, insert's own search was 4.1% of the CPU, 1.0%
// with the place passed on: docs/benchmarks.md, thirty-seventh session.)
func (c *children) find(t *Tree, name string) (bool, childPlace) {
	if c == nil || c.n == 0 || c.sortsLast(t, name) {
		return false, childPlace{}
	}
	if c.index != nil {
		return c.index.get(t, name) != 0, childPlace{}
	}
	i := c.chunkFor(name)
	j, found := searchChunk(t, c.chunks[i], name)
	return found, childPlace{chunk: i, pos: j, ok: !found}
}

// add inserts id, called name, at at if find placed it; the caller has checked that the
// name is absent.
func (c *children) add(t *Tree, id nodeID, name string, at childPlace) {
	c.n++
	c.insert(t, id, name, at)
	c.indexAdd(t, id, name)
}

// insert puts id, called name, in its place in the chunks: at, if find placed it.
func (c *children) insert(t *Tree, id nodeID, name string, at childPlace) {
	if len(c.chunks) == 0 {
		c.chunks = append(c.chunks, []nodeID{id})
		return
	}
	// Appending is the common case (sequential nodes, snapshots in name order).
	i := len(c.chunks) - 1
	ch := c.chunks[i]
	j := len(ch)
	switch {
	case at.ok:
		i, j = at.chunk, at.pos
		ch = c.chunks[i]
	case !c.sortsLast(t, name):
		i = c.chunkFor(name)
		ch = c.chunks[i]
		j, _ = searchChunk(t, ch, name)
	}
	ch = append(ch, 0)
	copy(ch[j+1:], ch[j:])
	ch[j] = id
	if len(ch) <= chunkMax {
		c.chunks[i] = ch
		if j == len(ch)-1 && c.lasts != nil {
			(*c.lasts)[i] = strings.Clone(name)
		}
		return
	}
	// Split in two halves; fresh slices so neither aliases the other.
	half := len(ch) / 2
	left := append(make([]nodeID, 0, chunkMax), ch[:half]...)
	right := append(make([]nodeID, 0, chunkMax), ch[half:]...)
	c.chunks = append(c.chunks, nil)
	copy(c.chunks[i+2:], c.chunks[i+1:])
	c.chunks[i], c.chunks[i+1] = left, right
	if c.lasts == nil {
		lasts := make([]string, len(c.chunks))
		c.lasts = &lasts
		for k := range c.chunks {
			c.setLast(t, k)
		}
		return
	}
	lasts := append(*c.lasts, "")
	copy(lasts[i+2:], lasts[i+1:])
	*c.lasts = lasts
	c.setLast(t, i)
	c.setLast(t, i+1)
}

// sortsLast reports whether name sorts after every child (so it is not one of them).
func (c *children) sortsLast(t *Tree, name string) bool {
	if c.len() == 0 {
		return true
	}
	if c.lasts != nil {
		lasts := *c.lasts
		return lasts[len(lasts)-1] < name
	}
	last := c.chunks[len(c.chunks)-1]
	return t.nameOf(last[len(last)-1]) < name
}

// remove deletes the child called name and returns its id (0 if it was not there).
func (c *children) remove(t *Tree, name string) nodeID {
	if c == nil || c.n == 0 {
		return 0
	}
	id := c.unlink(t, name)
	if id != 0 {
		c.indexRemove(t, id, name)
	}
	return id
}

// unlink takes the child called name out of the chunks and returns its id (0 if it
// was not there).
func (c *children) unlink(t *Tree, name string) nodeID {
	i := c.chunkFor(name)
	ch := c.chunks[i]
	j := c.place(t, ch, name)
	if j < 0 {
		return 0
	}
	id := ch[j]
	copy(ch[j:], ch[j+1:])
	ch = ch[:len(ch)-1]
	c.n--
	if len(ch) == 0 {
		copy(c.chunks[i:], c.chunks[i+1:])
		c.chunks[len(c.chunks)-1] = nil
		c.chunks = c.chunks[:len(c.chunks)-1]
		if c.lasts != nil {
			lasts := *c.lasts
			copy(lasts[i:], lasts[i+1:])
			lasts[len(lasts)-1] = ""
			*c.lasts = lasts[:len(lasts)-1]
			if len(c.chunks) <= 1 {
				c.lasts = nil
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

// place is where the child called name is in ch, the chunk that would hold it, or -1.
// With an index, the id is found by it and then among ch's ids, which reads no name
// from the arena (a binary search reads a dozen).
func (c *children) place(t *Tree, ch []nodeID, name string) int {
	if c.index != nil {
		if id := c.index.get(t, name); id != 0 {
			return slices.Index(ch, id)
		}
		return -1
	}
	if j, ok := searchChunk(t, ch, name); ok {
		return j
	}
	return -1
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
