package session

// SuperSecret is ZooKeeper's fixed password secret (ZooKeeperServer.superSecret).
// NewPassword(id, SuperSecret) gives the password Apache ZooKeeper would give id.
const SuperSecret int64 = 0xB3415C00

// NewPassword derives a session's 16-byte password as ZooKeeperServer.generatePasswd
// does: the bytes of java.util.Random seeded with id ^ secret. With SuperSecret the
// passwords equal ZooKeeper's, which anyone who knows the id can compute; a deployment
// that wants unguessable passwords passes a random cluster secret instead. Either way the
// result is deterministic, so the leader computes it once and writes it into the
// createSession entry, and followers never recompute it.
func NewPassword(id, secret int64) []byte {
	r := newJavaRandom(id ^ secret)
	p := make([]byte, 16)
	r.nextBytes(p)
	return p
}

// javaRandom is java.util.Random's generator: a 48-bit linear congruential generator
// (Knuth, TAOCP vol. 2, 3.2.1), reproduced exactly, overflow included.
type javaRandom struct{ seed int64 }

const (
	javaMultiplier = 0x5DEECE66D
	javaAddend     = 0xB
	javaMask       = 1<<48 - 1
)

func newJavaRandom(seed int64) *javaRandom {
	return &javaRandom{seed: (seed ^ javaMultiplier) & javaMask}
}

// next returns the top bits of the next state, as Random.next(bits).
func (r *javaRandom) next(bits uint) int32 {
	r.seed = (r.seed*javaMultiplier + javaAddend) & javaMask
	return int32(r.seed >> (48 - bits))
}

// nextBytes fills p as Random.nextBytes: each nextInt supplies four bytes, low byte first.
func (r *javaRandom) nextBytes(p []byte) {
	for i := 0; i < len(p); {
		rnd := r.next(32)
		for n := min(len(p)-i, 4); n > 0; n-- {
			p[i] = byte(rnd)
			rnd >>= 8
			i++
		}
	}
}
