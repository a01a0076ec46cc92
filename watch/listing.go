package watch

import (
	"iter"
	"sort"
)

// Count is ZooKeeper's watch count (mntr's zk_watch_count): a data and a child watch
// of one watcher on one path are two, a persistent or recursive watch counts twice.
func (r *Registry) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Summary is ZooKeeper's wchs, which shows its data watch manager only (data, exist,
// persistent and recursive watches; not child watches): the watchers with such a
// watch, the paths they watch, and the (path, watcher) pairs.
func (r *Registry) Summary() (watchers, paths, watches int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make([]bool, len(r.lists))
	for _, e := range r.byPath {
		data := false
		for s := range e.all {
			if s.kind&dataKinds == 0 {
				continue
			}
			data = true
			watches++
			if !seen[s.id] {
				seen[s.id] = true
				watchers++
			}
		}
		if data {
			paths++
		}
	}
	return watchers, paths, watches
}

// PathsOf returns, sorted, the paths w has a data-manager watch on (wchc).
func (r *Registry) PathsOf(w Watcher) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.ids[w]
	if !ok {
		return []string{}
	}
	l := r.lists[id]
	out := make([]string, 0, len(l.paths))
	for _, e := range l.paths {
		if s, _ := e.find(id); s.kind&dataKinds != 0 {
			out = append(out, e.path)
		}
	}
	sort.Strings(out)
	return out
}

// Watchers returns the watchers with a data-manager watch on path (wchp); order is
// unspecified.
func (r *Registry) Watchers(path string) []Watcher {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Watcher
	if e := r.byPath[path]; e != nil {
		for s := range e.all {
			if s.kind&dataKinds != 0 {
				out = append(out, r.lists[s.id].w)
			}
		}
	}
	return out
}

// WatchedPaths returns, sorted, every path with a data-manager watch (wchp).
func (r *Registry) WatchedPaths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for p, e := range r.byPath {
		for s := range e.all {
			if s.kind&dataKinds != 0 {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// paths yields every watched path and its watchers' kinds; the caller holds mu (or is
// a test that owns r).
func (r *Registry) paths(yield func(string, iter.Seq2[Watcher, Kind]) bool) {
	for p, e := range r.byPath {
		kinds := func(yield func(Watcher, Kind) bool) {
			for s := range e.all {
				if !yield(r.lists[s.id].w, s.kind) {
					return
				}
			}
		}
		if !yield(p, kinds) {
			return
		}
	}
}
