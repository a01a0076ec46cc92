package datatree

import "sort"

// chunkMax bounds one sorted chunk: inserting or deleting copies at most this many
// pointers, and the chunk index is 1/chunkMax of the children.
const chunkMax = 512

// children is the sorted set of a node's children, split into sorted chunks so
// that a node with very many children never pays a copy of all of them per change.
// Chunks are non-empty and ordered: every name in chunks[i] sorts before every name
// in chunks[i+1].
type children struct {
	chunks [][]*node
	n      int
}

// chunkFor returns the index of the chunk that holds or would hold name.
func (c *children) chunkFor(name string) int {
	// First chunk whose last name >= name; the last chunk if none.
	i := sort.Search(len(c.chunks), func(i int) bool {
		ch := c.chunks[i]
		return ch[len(ch)-1].name >= name
	})
	if i == len(c.chunks) && i > 0 {
		i--
	}
	return i
}

func searchChunk(ch []*node, name string) (int, bool) {
	j := sort.Search(len(ch), func(j int) bool { return ch[j].name >= name })
	return j, j < len(ch) && ch[j].name == name
}

func (c *children) get(name string) *node {
	if c == nil || c.n == 0 {
		return nil
	}
	ch := c.chunks[c.chunkFor(name)]
	if j, ok := searchChunk(ch, name); ok {
		return ch[j]
	}
	return nil
}

// add inserts n; the caller has checked that the name is absent.
func (c *children) add(n *node) {
	c.n++
	if len(c.chunks) == 0 {
		c.chunks = append(c.chunks, []*node{n})
		return
	}
	i := c.chunkFor(n.name)
	ch := c.chunks[i]
	j, _ := searchChunk(ch, n.name)
	ch = append(ch, nil)
	copy(ch[j+1:], ch[j:])
	ch[j] = n
	if len(ch) <= chunkMax {
		c.chunks[i] = ch
		return
	}
	// Split in two halves; fresh slices so neither aliases the other.
	half := len(ch) / 2
	left := append(make([]*node, 0, chunkMax), ch[:half]...)
	right := append(make([]*node, 0, chunkMax), ch[half:]...)
	c.chunks = append(c.chunks, nil)
	copy(c.chunks[i+2:], c.chunks[i+1:])
	c.chunks[i], c.chunks[i+1] = left, right
}

// remove deletes the child called name and reports whether it was there.
func (c *children) remove(name string) bool {
	if c == nil || c.n == 0 {
		return false
	}
	i := c.chunkFor(name)
	ch := c.chunks[i]
	j, ok := searchChunk(ch, name)
	if !ok {
		return false
	}
	copy(ch[j:], ch[j+1:])
	ch[len(ch)-1] = nil
	ch = ch[:len(ch)-1]
	c.n--
	if len(ch) == 0 {
		copy(c.chunks[i:], c.chunks[i+1:])
		c.chunks[len(c.chunks)-1] = nil
		c.chunks = c.chunks[:len(c.chunks)-1]
		return true
	}
	c.chunks[i] = ch
	return true
}

// each calls f for every child in name order until f returns false.
func (c *children) each(f func(*node) bool) {
	if c == nil {
		return
	}
	for _, ch := range c.chunks {
		for _, n := range ch {
			if !f(n) {
				return
			}
		}
	}
}

func (c *children) len() int {
	if c == nil {
		return 0
	}
	return c.n
}
