package session

import (
	"bufio"
	"encoding/hex"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oracle reads testdata/oracle.txt: ids and passwords computed by Apache ZooKeeper 3.8
// (testdata/Oracle.java says how to regenerate it).
func oracle(t *testing.T) (passwords map[int64]string, ids [][3]int64) {
	t.Helper()
	f, err := os.Open("testdata/oracle.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	passwords = map[int64]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fs := strings.Fields(s.Text())
		num := func(i int) int64 {
			v, err := strconv.ParseInt(fs[i], 10, 64)
			if err != nil {
				t.Fatalf("oracle line %q: %v", s.Text(), err)
			}
			return v
		}
		switch {
		case len(fs) == 3 && fs[0] == "passwd":
			passwords[num(1)] = fs[2]
		case len(fs) == 4 && fs[0] == "id":
			ids = append(ids, [3]int64{num(1), num(2), num(3)})
		default:
			t.Fatalf("oracle line %q", s.Text())
		}
	}
	if len(passwords) == 0 || len(ids) == 0 {
		t.Fatal("empty oracle")
	}
	return passwords, ids
}

func TestPasswordMatchesZooKeeper(t *testing.T) {
	passwords, _ := oracle(t)
	for id, want := range passwords {
		if got := hex.EncodeToString(NewPassword(id, SuperSecret)); got != want {
			t.Errorf("NewPassword(%#x) = %s, ZooKeeper says %s", id, got, want)
		}
	}
	if p := NewPassword(1, SuperSecret); len(p) != 16 {
		t.Fatalf("password of %d bytes", len(p))
	}
	if hex.EncodeToString(NewPassword(1, 42)) == passwords[1] {
		t.Fatal("the secret does not change the password")
	}
}

// java.util.Random(42).nextInt() is -1170105035, a value quoted widely; checks next(32).
func TestJavaRandom(t *testing.T) {
	r := newJavaRandom(42)
	if got := r.next(32); got != -1170105035 {
		t.Fatalf("new Random(42).nextInt() = %d", got)
	}
	// nextBytes takes a fresh int for a tail shorter than four bytes.
	a, b := make([]byte, 5), make([]byte, 8)
	newJavaRandom(7).nextBytes(a)
	newJavaRandom(7).nextBytes(b)
	if string(a) != string(b[:5]) {
		t.Fatalf("nextBytes(5) = %x, first five of nextBytes(8) = %x", a, b[:5])
	}
}

func TestInitialIDMatchesZooKeeper(t *testing.T) {
	_, ids := oracle(t)
	for _, c := range ids {
		sid, ms, want := c[0], c[1], c[2]
		got, err := InitialID(sid, time.UnixMilli(ms))
		if want == math.MinInt64 {
			want++ // ZooKeeper skips the container owner value too
		}
		if err != nil || got != want {
			t.Errorf("InitialID(%d, %d ms) = %#x, %v; ZooKeeper says %#x", sid, ms, got, err, want)
		}
	}
}

func TestInitialIDByHand(t *testing.T) {
	// 1700000000000 ms = 0x18B_CFE5_6800. Shifted left 24 the top bit (bit 40 of the
	// time) falls off and bit 63 is set: 0x8BCF_E568_0000_0000. An unsigned shift right
	// by 8 gives 0x008B_CFE5_6800_0000 (a signed one would give 0xFF8B...); server 1
	// in the top byte makes 0x018B_CFE5_6800_0000.
	got, err := InitialID(1, time.UnixMilli(1700000000000))
	if err != nil || got != 0x018BCFE568000000 {
		t.Fatalf("InitialID = %#x, %v", got, err)
	}
	// Sub-millisecond time does not matter.
	if got2, _ := InitialID(1, time.UnixMilli(1700000000000).Add(999*time.Microsecond)); got2 != got {
		t.Fatalf("sub-ms time changed the id: %#x", got2)
	}
	// Server 254 is the largest allowed; its ids are negative, which is fine.
	got, err = InitialID(254, time.UnixMilli(1))
	if err != nil || uint64(got) != 0xFE00000000010000 {
		t.Fatalf("InitialID(254) = %#x, %v", got, err)
	}
	for _, sid := range []int64{255, 256, -1, 1 << 40} {
		if _, err := InitialID(sid, time.UnixMilli(1)); err != ErrServerID {
			t.Errorf("server id %d: %v, want ErrServerID", sid, err)
		}
	}
	// Server 128 at a time whose low 40 bits are zero would make the container owner.
	got, _ = InitialID(128, time.UnixMilli(1<<40))
	if got != math.MinInt64+1 {
		t.Fatalf("container owner not skipped: %#x", got)
	}
}

func TestIDGenerator(t *testing.T) {
	g, err := NewIDGenerator(3, time.UnixMilli(1700000000000))
	if err != nil {
		t.Fatal(err)
	}
	first := g.Next()
	if first != 0x038BCFE568000000 {
		t.Fatalf("first id %#x", first)
	}
	for i := int64(1); i < 5; i++ {
		if id := g.Next(); id != first+i {
			t.Fatalf("id %d = %#x, want %#x", i, id, first+i)
		}
	}
	// Server 0 at a time whose low 40 bits are zero starts at 0: skipped.
	g, _ = NewIDGenerator(0, time.UnixMilli(1<<40))
	if id := g.Next(); id != 1 {
		t.Fatalf("first id for server 0 at 2^40 ms = %d, want 1", id)
	}
	if _, err := NewIDGenerator(255, time.Now()); err != ErrServerID {
		t.Fatalf("server 255: %v", err)
	}
}

func TestNegotiateTimeout(t *testing.T) {
	const tick = 2000
	for _, tt := range []struct{ req, min, max, want int32 }{
		{30000, 2 * tick, 20 * tick, 30000},
		{1000, 2 * tick, 20 * tick, 4000},
		{4000, 2 * tick, 20 * tick, 4000},
		{40000, 2 * tick, 20 * tick, 40000},
		{40001, 2 * tick, 20 * tick, 40000},
		{0, 2 * tick, 20 * tick, 4000},
		{-5, 2 * tick, 20 * tick, 4000},
		{math.MaxInt32, 2 * tick, 20 * tick, 40000},
		{5000, 10000, 6000, 6000}, // min > max: max wins, as in ZooKeeper
	} {
		if got := NegotiateTimeout(tt.req, tt.min, tt.max); got != tt.want {
			t.Errorf("NegotiateTimeout(%d, %d, %d) = %d, want %d", tt.req, tt.min, tt.max, got, tt.want)
		}
	}
}
