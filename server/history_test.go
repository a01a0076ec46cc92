package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// A history check through leader kills: go-zookeeper clients on a 3-process cluster
// create nodes, sequential nodes and compare-and-set a counter while the leader is killed
// with SIGKILL and restarted, twice, and then paused (SIGSTOP) and resumed. Every acknowledged write must be on every member
// afterwards, nothing appears that no client attempted, the members agree, and each
// client's acknowledged sequential nodes carry increasing suffixes.
func TestHistoryThroughLeaderKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	setup := zkSession(t, 10*time.Second, strings.Split(c.ConnectString(), ",")...)
	for _, p := range []string{"/h", "/h/k", "/h/seq"} {
		if _, err := setup.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := setup.Create("/h/counter", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}

	const clients = 4
	type history struct {
		ackedKeys, unknownKeys map[string]bool
		ackedSeq               []string // names in the order acknowledged
		seqData                map[string]bool
		ackedCAS               []int
	}
	hist := make([]*history, clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for ci := 0; ci < clients; ci++ {
		h := &history{ackedKeys: map[string]bool{}, unknownKeys: map[string]bool{}, seqData: map[string]bool{}}
		hist[ci] = h
		conn := zkSession(t, 10*time.Second, strings.Split(c.ConnectString(), ",")...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("c%d-%d", ci, i)
				switch i % 3 {
				case 0:
					_, err := conn.Create("/h/k/"+key, nil, 0, zk.WorldACL(zk.PermAll))
					if err == nil {
						h.ackedKeys[key] = true
					} else {
						h.unknownKeys[key] = true
					}
				case 1:
					name, err := conn.Create("/h/seq/s-", []byte(key), zk.FlagSequence, zk.WorldACL(zk.PermAll))
					h.seqData[key] = true
					if err == nil {
						h.ackedSeq = append(h.ackedSeq, strings.TrimPrefix(name, "/h/seq/"))
					}
				case 2:
					data, st, err := conn.Get("/h/counter")
					if err != nil {
						continue
					}
					v, _ := strconv.Atoi(string(data))
					if _, err := conn.Set("/h/counter", []byte(strconv.Itoa(v+1)), st.Version); err == nil {
						h.ackedCAS = append(h.ackedCAS, v+1)
					}
				}
			}
		}()
	}

	for kill := 0; kill < 2; kill++ {
		time.Sleep(700 * time.Millisecond)
		l := c.Leader()
		if l < 0 {
			t.Fatal("no leader")
		}
		t.Logf("killing the leader, member %d", l+1)
		c.Members[l].Kill()
		time.Sleep(700 * time.Millisecond)
		if err := c.Members[l].Restart(false); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	// A leader paused (SIGSTOP) keeps its connections open while the others elect a new
	// one, and resumes believing it leads, with its members' proposals buffered.
	time.Sleep(700 * time.Millisecond)
	l := c.Leader()
	if l < 0 {
		t.Fatal("no leader")
	}
	t.Logf("pausing the leader, member %d", l+1)
	if err := c.Members[l].Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := c.Members[l].Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()

	// What each member holds, read after a sync on that member alone.
	type state struct {
		keys, seq []string
		seqData   map[string]string
		counter   string
		version   int32
	}
	var states []state
	for i, m := range c.Members {
		conn := zkSession(t, 10*time.Second, m.Addr)
		var s state
		s.seqData = map[string]string{}
		if err := retryLoss(t, func() (err error) {
			if _, err = conn.Sync("/h"); err != nil {
				return err
			}
			if s.keys, _, err = conn.Children("/h/k"); err != nil {
				return err
			}
			if s.seq, _, err = conn.Children("/h/seq"); err != nil {
				return err
			}
			for _, n := range s.seq {
				d, _, err := conn.Get("/h/seq/" + n)
				if err != nil {
					return err
				}
				s.seqData[n] = string(d)
			}
			d, st, err := conn.Get("/h/counter")
			s.counter, s.version = string(d), st.Version
			return err
		}); err != nil {
			t.Fatalf("member %d: %v", i+1, err)
		}
		slices.Sort(s.keys)
		slices.Sort(s.seq)
		states = append(states, s)
	}
	for i, s := range states[1:] {
		if !slices.Equal(s.keys, states[0].keys) || !slices.Equal(s.seq, states[0].seq) || s.counter != states[0].counter || s.version != states[0].version {
			t.Fatalf("member %d disagrees with member 1: %d/%d keys, %d/%d sequential, counter %s/%s", i+2,
				len(s.keys), len(states[0].keys), len(s.seq), len(states[0].seq), s.counter, states[0].counter)
		}
	}
	s := states[0]
	present := map[string]bool{}
	for _, k := range s.keys {
		present[k] = true
	}
	seqPresent := map[string]bool{}
	for _, n := range s.seq {
		seqPresent[n] = true
	}
	acked, casAcked := 0, map[int]bool{}
	for ci, h := range hist {
		for k := range h.ackedKeys {
			acked++
			if !present[k] {
				t.Errorf("client %d: acknowledged create of %s is lost", ci, k)
			}
		}
		for i, n := range h.ackedSeq {
			acked++
			if !seqPresent[n] {
				t.Errorf("client %d: acknowledged sequential node %s is lost", ci, n)
			}
			if i > 0 && n <= h.ackedSeq[i-1] {
				t.Errorf("client %d: sequential %s acknowledged after %s", ci, n, h.ackedSeq[i-1])
			}
		}
		for _, v := range h.ackedCAS {
			acked++
			if casAcked[v] {
				t.Errorf("two clients' compare-and-set both wrote %d", v)
			}
			casAcked[v] = true
		}
	}
	for _, k := range s.keys {
		var ci, i int
		fmt.Sscanf(k, "c%d-%d", &ci, &i)
		if ci < 0 || ci >= clients || !hist[ci].ackedKeys[k] && !hist[ci].unknownKeys[k] {
			t.Errorf("node %s appeared that no client created", k)
		}
	}
	seen := map[string]bool{}
	for n, d := range s.seqData {
		var ci, i int
		fmt.Sscanf(d, "c%d-%d", &ci, &i)
		if ci < 0 || ci >= clients || !hist[ci].seqData[d] {
			t.Errorf("sequential node %s holds %q, which no client wrote", n, d)
		}
		if seen[d] {
			t.Errorf("one create applied twice: %q", d)
		}
		seen[d] = true
	}
	final, _ := strconv.Atoi(s.counter)
	if int32(final) != s.version {
		t.Errorf("counter %d at version %d: a compare-and-set was applied twice or lost", final, s.version)
	}
	for v := range casAcked {
		if v > final {
			t.Errorf("acknowledged counter value %d is above the final %d", v, final)
		}
	}
	if acked < 100 {
		t.Errorf("only %d acknowledged writes: the cluster hardly served during the kills", acked)
	}
	t.Logf("%d acknowledged writes checked; %d nodes, %d sequential, counter %d", acked, len(s.keys), len(s.seq), final)
}
