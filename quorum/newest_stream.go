package quorum

import "sync"

// Newest streams: a leader takes a member's forwarded writes only from the newest
// stream that member opened to it. A follower gives a stream up (its leader left, a
// write timed out) and fails the writes it had sent on it, outcome unknown, so their
// connections close; the client comes back on a new connection and writes again, on a
// new stream. The old stream's bytes can still be in flight or unread in the leader's
// buffer, and once read, its first write of a dead connection would follow the new
// connection's acknowledged writes in the log (the FSM's write cursor takes any
// connection's first write). So each accepted stream gets a number, in order of
// acceptance; a stream claims its member with the first frame naming it, and from then
// on an older stream of that member is refused whatever it still brings (as refusing
// after leaving the leadership, the rest of it too). The claim and the append of an
// entry happen under the member's lock, so the log holds either the old stream's entry
// before anything of the new one, or nothing of the old one after the claim.
type newestStreams struct {
	mu      sync.Mutex
	members map[string]*memberStreams
}

type memberStreams struct {
	mu     sync.Mutex
	newest uint64 // the number of the newest stream that claimed the member
}

// of returns member's record; a stream looks it up once per member it carries, not per
// entry.
func (s *newestStreams) of(member string) *memberStreams {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.members == nil {
		s.members = map[string]*memberStreams{}
	}
	m := s.members[member]
	if m == nil {
		m = &memberStreams{}
		s.members[member] = m
	}
	return m
}

// claim records that stream number gen carries member's frames and reports whether it
// is still the member's newest: false once a later stream has claimed it.
func (m *memberStreams) claim(gen uint64) bool {
	if gen < m.newest {
		return false
	}
	m.newest = gen
	return true
}

// whileNewest runs fn, holding m's lock, if stream gen is still m's newest (claiming
// it), and reports whether it did.
func (m *memberStreams) whileNewest(gen uint64, fn func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.claim(gen) {
		return false
	}
	fn()
	return true
}
