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
// A member keeps the same order among a session's connections (Stream.sendAll).

// newestClaims records, for each key, the newest that claimed it: of a member's streams
// here (looked up once per member a stream carries), or of a session's connections on
// this member (looked up on every write, without a lock once the record is there).
type newestClaims[K comparable] struct {
	claims sync.Map // K -> *newestClaim
}

// newestClaim is the number of the newest stream or connection that claimed one key.
type newestClaim struct {
	mu     sync.Mutex
	newest uint64
}

// of returns k's record.
func (s *newestClaims[K]) of(k K) *newestClaim {
	if m, ok := s.claims.Load(k); ok {
		return m.(*newestClaim)
	}
	m, _ := s.claims.LoadOrStore(k, &newestClaim{})
	return m.(*newestClaim)
}

// forget drops k's record (a closed session's).
func (s *newestClaims[K]) forget(k K) { s.claims.Delete(k) }

// prune drops the records of the keys keep says no (the sessions a snapshot installed
// here no longer holds: their closeSession was never applied here).
func (s *newestClaims[K]) prune(keep func(K) bool) {
	s.claims.Range(func(k, _ any) bool {
		if !keep(k.(K)) {
			s.claims.Delete(k)
		}
		return true
	})
}

// claim records that number gen (a stream carrying the member's frames) claims m and
// reports whether it is still the newest: false once a later one has claimed it.
func (m *newestClaim) claim(gen uint64) bool {
	if gen < m.newest {
		return false
	}
	m.newest = gen
	return true
}

// whileNewest runs fn, holding m's lock, if gen is still m's newest (claiming it), and
// reports whether it did.
func (m *newestClaim) whileNewest(gen uint64, fn func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.claim(gen) {
		return false
	}
	fn()
	return true
}
