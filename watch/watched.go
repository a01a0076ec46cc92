package watch

// watched is one watched path: the registry's one copy of the path (the key of the
// per-path index, and what every watcher's list points at) and the kinds each of its
// watchers holds there. Most paths have a few watchers, kept in a slice searched
// linearly; above maxFew they move to a map, and back below maxFew/2.
type watched struct {
	path string
	few  []slot         // unordered; unused once many is set
	many map[int32]slot // by watcher id, when more than maxFew watch the path
}

// slot is one watcher's watches on a path: the watcher's id, its kinds there, and
// where the path sits in that watcher's list, so one watch is removed in O(1).
type slot struct {
	id   int32
	at   int32
	kind Kind
}

// maxFew is how many watchers a path keeps in its slice before it switches to a map. A
// slot is 12 bytes, so 8 of them are two cache lines to scan.
const maxFew = 8

// size is the number of watchers of the path.
func (e *watched) size() int {
	if e.many != nil {
		return len(e.many)
	}
	return len(e.few)
}

// find returns the slot of watcher id.
func (e *watched) find(id int32) (slot, bool) {
	if e.many != nil {
		s, ok := e.many[id]
		return s, ok
	}
	for _, s := range e.few {
		if s.id == id {
			return s, true
		}
	}
	return slot{}, false
}

// put stores s, replacing the slot of the same watcher if there is one.
func (e *watched) put(s slot) {
	if e.many != nil {
		e.many[s.id] = s
		return
	}
	for i := range e.few {
		if e.few[i].id == s.id {
			e.few[i] = s
			return
		}
	}
	if len(e.few) < maxFew {
		// Grow by one: a path's watchers rarely change in bulk, and a slice with
		// room to spare costs every watched path its spare bytes.
		grown := make([]slot, len(e.few)+1)
		copy(grown, e.few)
		grown[len(e.few)] = s
		e.few = grown
		return
	}
	e.many = make(map[int32]slot, maxFew+1)
	for _, o := range e.few {
		e.many[o.id] = o
	}
	e.many[s.id] = s
	e.few = nil
}

// drop removes the slot of watcher id, if any.
func (e *watched) drop(id int32) {
	if e.many != nil {
		delete(e.many, id)
		if len(e.many) <= maxFew/2 {
			few := make([]slot, 0, len(e.many))
			for _, s := range e.many {
				few = append(few, s)
			}
			e.few, e.many = few, nil
		}
		return
	}
	for i := range e.few {
		if e.few[i].id == id {
			last := len(e.few) - 1
			e.few[i] = e.few[last]
			e.few = e.few[:last]
			return
		}
	}
}

// moved records that the path is now at index at of watcher id's list.
func (e *watched) moved(id int32, at int32) {
	if e.many != nil {
		s := e.many[id]
		s.at = at
		e.many[id] = s
		return
	}
	for i := range e.few {
		if e.few[i].id == id {
			e.few[i].at = at
			return
		}
	}
}

// slots appends a copy of every slot to buf, for callers that change e as they go.
func (e *watched) slots(buf []slot) []slot {
	if e.many == nil {
		return append(buf, e.few...)
	}
	for _, s := range e.many {
		buf = append(buf, s)
	}
	return buf
}

// all yields every slot; e must not change meanwhile.
func (e *watched) all(yield func(slot) bool) {
	if e.many == nil {
		for _, s := range e.few {
			if !yield(s) {
				return
			}
		}
		return
	}
	for _, s := range e.many {
		if !yield(s) {
			return
		}
	}
}
