package server

// Fault injection against real zkraft processes (server/ztest), the way a Jepsen-style
// suite tests a ZooKeeper ensemble: members killed (SIGKILL), paused (SIGSTOP) for
// longer and shorter than the sessions' timeout, all restarted at once, stopped
// gracefully, restarted on a wiped data dir; go-zookeeper clients check what ZooKeeper
// 3.8 promises them across those faults: acknowledged writes kept, a session's writes
// in order, sequential numbers never reused, the lock recipe held by one client at a
// time, an expired session's ephemerals gone on every member, watches that fire once
// and never for a change already read, and no state older than the client saw.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// orderedHosts is a go-zookeeper host provider that tries its servers in the order
// given (zk.Connect shuffles the list it hands Init, so the order is the one it was
// made with), so a test decides which member a client starts on and where it moves.
// One that leaves its first server tries it no more: go-zookeeper's handshake with a
// paused member waits ten read timeouts, longer than the session lives.
type orderedHosts struct {
	servers []string
	leaves  bool
	next    int
	tried   int
}

func (h *orderedHosts) Init([]string) error { return nil }
func (h *orderedHosts) Len() int            { return len(h.servers) }
func (h *orderedHosts) Connected()          { h.tried = 0 }
func (h *orderedHosts) Next() (string, bool) {
	i := h.next % len(h.servers)
	if h.leaves && h.next >= len(h.servers) && len(h.servers) > 1 {
		i = 1 + (h.next-1)%(len(h.servers)-1)
	}
	s := h.servers[i]
	h.next++
	h.tried++
	retry := h.tried > len(h.servers)
	if retry {
		h.tried = 1
	}
	return s, retry
}

// faultSession is a go-zookeeper session that tries addrs in order, and its events.
func faultSession(t *testing.T, timeout time.Duration, addrs ...string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	return zkSessionWith(t, timeout, addrs, &orderedHosts{servers: addrs})
}

// leavingSession is a faultSession that never goes back to addrs[0] once it has left.
func leavingSession(t *testing.T, timeout time.Duration, addrs ...string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	return zkSessionWith(t, timeout, addrs, &orderedHosts{servers: addrs, leaves: true})
}

// stopProcess stops a member's process (SIGSTOP): its sockets stay open and the kernel keeps
// accepting and buffering for it, as for a process stuck in a long GC pause or a
// frozen VM. A test that ends early resumes it before the cluster is stopped.
func stopProcess(t *testing.T, s *ztest.Server) {
	t.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Cmd.Process.Signal(syscall.SIGCONT) })
}

func continueProcess(t *testing.T, s *ztest.Server) {
	t.Helper()
	if err := s.Cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// existsOn reads whether path exists on one member alone, after a sync there.
func existsOn(t *testing.T, addr, path string) bool {
	t.Helper()
	c, _ := faultSession(t, 10*time.Second, addr)
	defer c.Close()
	var ok bool
	if err := retryLoss(t, func() (err error) {
		if _, err = c.Sync("/"); err != nil {
			return err
		}
		ok, _, err = c.Exists(path)
		return err
	}); err != nil {
		t.Fatalf("exists %s on %s: %v", path, addr, err)
	}
	return ok
}

// A leader paused (SIGSTOP) for longer than a session's timeout, whose client cannot
// reach another member: the others elect a leader, which expires that session (its
// lock node goes, and a waiter on another member takes the lock); a session whose
// client moves to another member in time survives. When the old leader resumes it must
// not give the expired session back, and must drop its ephemeral too.
func TestFaultLeaderPausedLongerThanSessionTimeout(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		follower bool
	}{{"leader of 3", 3, false}, {"follower of 3", 3, true}, {"leader of 5", 5, false}} {
		t.Run(tc.name, func(t *testing.T) { pausedLongerThanSessionTimeout(t, tc.n, tc.follower) })
	}
}

func pausedLongerThanSessionTimeout(t *testing.T, n int, follower bool) {
	c := faultCluster(t, n)
	l := c.AwaitLeader(10 * time.Second)
	if l < 0 {
		t.Fatal("no leader")
	}
	if follower {
		l = (l + 1) % n
	}
	var others []string
	for i, m := range c.Members {
		if i != l {
			others = append(others, m.Addr)
		}
	}
	lead := c.Members[l]
	const timeout = 4 * time.Second
	stuck, stuckEvents := faultSession(t, timeout, lead.Addr)
	// The mover leaves for good: a client that went back to the paused member while the
	// others elect (refusing it meanwhile) would wait out its handshake there, past its
	// session's timeout (a flake of "leader of 5" under the whole suite's load).
	mover, _ := leavingSession(t, timeout, append([]string{lead.Addr}, others...)...)
	waiter, _ := faultSession(t, timeout, others...)
	if _, err := waiter.Create("/lock", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := stuck.Create("/lock/stuck", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := mover.Create("/lock/mover", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.Sync("/lock"); err != nil { // the waiter's member has the node
		t.Fatal(err)
	}
	_, _, gone, err := waiter.ExistsW("/lock/stuck")
	if err != nil {
		t.Fatal(err)
	}
	stopProcess(t, lead)
	paused := time.Now()
	select {
	case ev := <-gone:
		if ev.Type != zk.EventNodeDeleted {
			t.Fatalf("waiter's watch: %v", ev)
		}
		t.Logf("the stuck session's node went %v after the pause", time.Since(paused))
	case <-time.After(30 * time.Second):
		continueProcess(t, lead)
		t.Fatalf("the stuck session's ephemeral is still there 30s after its leader paused\n%s", c.LogTails())
	}
	if d := time.Since(paused); d < timeout {
		t.Errorf("the stuck session expired %v after its server paused, before its timeout", d)
	}
	for _, a := range others {
		if existsOn(t, a, "/lock/stuck") {
			t.Errorf("%s still holds the expired session's ephemeral", a)
		}
		if !existsOn(t, a, "/lock/mover") {
			t.Errorf("%s lost the ephemeral of the session that moved in time", a)
		}
	}
	continueProcess(t, lead)
	// The stuck client comes back to its old server only: it must hear that its
	// session expired, never be served as if it still held the lock.
	deadline := time.After(30 * time.Second)
	for expired := false; !expired; {
		select {
		case ev := <-stuckEvents:
			if ev.State == zk.StateHasSession {
				t.Fatalf("the expired session was given back by the resumed old leader")
			}
			expired = ev.State == zk.StateExpired
		case <-deadline:
			t.Fatalf("the stuck client heard nothing of its expiry 30s after the resume\n%s", c.LogTails())
		}
	}
	if err := c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	if existsOn(t, lead.Addr, "/lock/stuck") {
		t.Errorf("the resumed old leader still holds the expired session's ephemeral")
	}
	if !existsOn(t, lead.Addr, "/lock/mover") {
		t.Errorf("the resumed old leader lost the moved session's ephemeral")
	}
	if _, err := mover.Set("/lock/mover", []byte("x"), -1); err != nil {
		t.Errorf("the moved session: %v", err)
	}
}

// A follower holding clients paused for less than their session timeout: the clients
// move to the other members and keep their sessions, ephemerals and the state they
// read (no read older than one before), and the resumed follower serves them again.
func TestFaultFollowerPausedShorterThanSessionTimeout(t *testing.T) {
	c := faultCluster(t, 3)
	l := c.Leader()
	f := (l + 1) % 3
	g := (l + 2) % 3
	addrs := []string{c.Members[f].Addr, c.Members[g].Addr, c.Members[l].Addr}
	const timeout = 6 * time.Second
	writer, _ := faultSession(t, timeout, c.Members[l].Addr)
	if _, err := writer.Create("/n", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	reader, _ := faultSession(t, timeout, addrs...)
	if _, err := reader.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			i++
			if _, err := writer.Set("/n", []byte(fmt.Sprint(i)), -1); err != nil {
				done <- err
				return
			}
		}
	}()
	last := -1
	read := func() {
		t.Helper()
		var d []byte
		if err := retryLoss(t, func() (err error) { d, _, err = reader.Get("/n"); return err }); err != nil {
			t.Fatal(err)
		}
		var v int
		fmt.Sscan(string(d), &v)
		if v < last {
			t.Fatalf("the reader read %d after %d: older state after a reconnect", v, last)
		}
		last = v
	}
	for i := 0; i < 20; i++ {
		read()
	}
	stopProcess(t, c.Members[f])
	end := time.Now().Add(timeout / 2)
	for time.Now().Before(end) {
		read()
	}
	continueProcess(t, c.Members[f])
	end = time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		read()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Members {
		if !existsOn(t, m.Addr, "/eph") {
			t.Errorf("%s lost the ephemeral of the session that moved", m.Addr)
		}
	}
	if reader.State() != zk.StateHasSession {
		t.Errorf("reader: %v", reader.State())
	}
}

// A follower paused (SIGSTOP) for longer than the members' peer timeout (10 s) while a
// client writes through the leader: the leader's replication to it times out and ends
// (the pipeline's answer reader gives up after 10 s and closes the connection, so the
// send waiting behind it fails). Once resumed, the follower must get the log again and
// serve every write acknowledged meanwhile. This path does not reach the wedge that
// quorum/pipeline.go mends (a refusal on a live connection); the quorum tests show that.
func TestFaultFollowerPausedLongerThanThePeerTimeout(t *testing.T) {
	c := faultCluster(t, 3)
	l := c.Leader()
	f := (l + 1) % 3
	writer, _ := faultSession(t, 30*time.Second, c.Members[l].Addr)
	if _, err := writer.Create("/n", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	var acked atomic.Int64
	go func() {
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := writer.Set("/n", []byte(fmt.Sprint(i)), -1); err != nil {
				done <- err
				return
			}
			acked.Store(i)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	stopProcess(t, c.Members[f])
	time.Sleep(12 * time.Second)
	continueProcess(t, c.Members[f])
	time.Sleep(time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := acked.Load()

	reader, _ := faultSession(t, 30*time.Second, c.Members[f].Addr)
	var got int64
	for deadline := time.Now().Add(20 * time.Second); got != want; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the resumed follower still serves /n = %d, 20 s after the write of %d was acknowledged", got, want)
		}
		var d []byte
		if err := retryLoss(t, func() (err error) { d, _, err = reader.Get("/n"); return err }); err != nil {
			t.Fatal(err)
		}
		got, _ = strconv.ParseInt(string(d), 10, 64)
	}
}

// Every member SIGKILLed at once and restarted: sequential numbers go on from where
// they were (never reused, even for deleted children), an ephemeral's session whose
// client is gone expires on every member, and a client that comes back keeps its
// session.
func TestFaultWholeClusterRestart(t *testing.T) {
	c := faultCluster(t, 3)
	const timeout = 6 * time.Second
	a, _ := faultSession(t, timeout, strings.Split(c.ConnectString(), ",")...)
	if _, err := a.Create("/q", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	var lastSeq string
	for i := 0; i < 10; i++ {
		name, err := a.Create("/q/s-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			t.Fatal(err)
		}
		lastSeq = name
		if i%2 == 0 {
			if err := a.Delete(name, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := a.Delete(lastSeq, -1); err != nil {
		t.Fatal(err)
	}
	gone, _ := faultSession(t, timeout, strings.Split(c.ConnectString(), ",")...)
	if _, err := gone.Create("/gone", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Create("/kept", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Members {
		m.Kill()
	}
	gone.Close() // its close cannot reach anyone: the session must expire
	if err := c.Restart(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	var name string
	if err := retryLoss(t, func() (err error) {
		name, err = a.Create("/q/s-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if name <= lastSeq {
		t.Errorf("sequential node %s after the restart, %s was created before it", name, lastSeq)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, m := range c.Members {
		for existsOn(t, m.Addr, "/gone") {
			if time.Now().After(deadline) {
				t.Fatalf("%s still holds the gone session's ephemeral 30s after the restart", m.Addr)
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !existsOn(t, m.Addr, "/kept") {
			t.Errorf("%s lost the ephemeral of the session that came back", m.Addr)
		}
	}
}

// A leader paused for less than a session's timeout, but long enough for the others to
// elect another: its clients, which know no other member, keep their sessions and
// ephemerals (a lock stays held, no waiter takes it), and are served again once the old
// leader follows.
func TestFaultLeaderPausedShorterThanSessionTimeout(t *testing.T) {
	longFault(t)
	c := faultCluster(t, 3)
	l := c.Leader()
	var others []string
	for i, m := range c.Members {
		if i != l {
			others = append(others, m.Addr)
		}
	}
	lead := c.Members[l]
	const timeout = 10 * time.Second
	holder, holderEvents := faultSession(t, timeout, lead.Addr)
	waiter, _ := faultSession(t, timeout, others...)
	if _, err := waiter.Create("/lock", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Create("/lock/holder", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.Sync("/lock"); err != nil { // the waiter's member has the node
		t.Fatal(err)
	}
	_, _, gone, err := waiter.ExistsW("/lock/holder")
	if err != nil {
		t.Fatal(err)
	}
	stopProcess(t, lead)
	// Until another member leads.
	deadline := time.Now().Add(20 * time.Second)
	for {
		nl := c.Leader()
		if nl >= 0 && nl != l {
			break
		}
		if time.Now().After(deadline) {
			continueProcess(t, lead)
			t.Fatal("no other leader 20s into the pause")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	continueProcess(t, lead)
	resumed := time.Now()
	end := time.After(timeout + timeout/2)
	for done := false; !done; {
		select {
		case ev := <-gone:
			t.Fatalf("the holder's lock node went %v after the resume: %v", time.Since(resumed), ev)
		case ev := <-holderEvents:
			t.Logf("holder: %v %v", ev.State, time.Since(resumed))
			if ev.State == zk.StateExpired {
				t.Fatalf("the holder's session expired %v after the resume\n%s", time.Since(resumed), c.LogTails())
			}
		case <-end:
			done = true
		}
	}
	if err := retryLoss(t, func() error { _, err := holder.Set("/lock/holder", []byte("x"), -1); return err }); err != nil {
		t.Errorf("the holder: %v", err)
	}
}

// A history check through every fault in turn, on go-zookeeper clients that know every
// member: a follower paused, a follower killed and restarted, the leader paused longer
// than the sessions' timeout, every member killed at once and restarted, a follower
// restarted on a wiped data dir, and the leader paused briefly. Every acknowledged
// write must be on every member afterwards, each client's acknowledged sequential
// names increase, no compare-and-set is lost or doubled, and no client ever reads an
// older counter than it read before (lastZxidSeen across its reconnects).
func TestFaultNemesisHistory(t *testing.T) {
	nemesisHistory(t, 3, everyFault)
}

// The history check of TestFaultNemesisHistory on five members (commit notices only,
// no durable notices), paused in turn for a random 0.3 to 1.5 s each, the leader more
// often than not, for 20 s: leaders change again and again while clients write.
func TestFaultFlappingPauses(t *testing.T) {
	longFault(t)
	nemesisHistory(t, 5, flappingPauses)
}

func flappingPauses(t *testing.T, c *ztest.Cluster, n int, timeout time.Duration) {
	end := time.Now().Add(20 * time.Second)
	for i := 0; time.Now().Before(end); i++ {
		m := c.Leader()
		if m < 0 || i%3 == 2 {
			m = rand.IntN(n)
		}
		d := 300*time.Millisecond + rand.N(1200*time.Millisecond)
		t.Logf("pausing member %d for %v", m+1, d)
		stopProcess(t, c.Members[m])
		time.Sleep(d)
		continueProcess(t, c.Members[m])
		time.Sleep(rand.N(time.Second))
	}
	if err := c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
}

func everyFault(t *testing.T, c *ztest.Cluster, n int, timeout time.Duration) {
	settle := func(what string) {
		t.Helper()
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatalf("after %s: %v", what, err)
		}
		time.Sleep(time.Second)
	}
	leader := func() int {
		t.Helper()
		l := c.AwaitLeader(10 * time.Second)
		if l < 0 {
			t.Fatal("no leader")
		}
		return l
	}
	time.Sleep(time.Second)

	f := (leader() + 1) % n
	t.Logf("pausing follower %d", f+1)
	stopProcess(t, c.Members[f])
	time.Sleep(2 * time.Second)
	continueProcess(t, c.Members[f])
	settle("a follower's pause")

	f = (leader() + 1) % n
	t.Logf("killing follower %d", f+1)
	c.Members[f].Kill()
	time.Sleep(time.Second)
	if err := c.Members[f].Restart(false); err != nil {
		t.Fatal(err)
	}
	settle("a follower's restart")

	l := leader()
	t.Logf("pausing leader %d past the session timeout", l+1)
	stopProcess(t, c.Members[l])
	time.Sleep(timeout + 2*time.Second)
	continueProcess(t, c.Members[l])
	settle("the leader's long pause")

	t.Logf("killing every member")
	for _, m := range c.Members {
		m.Kill()
	}
	for _, m := range c.Members {
		if err := m.Restart(false); err != nil {
			t.Fatal(err)
		}
	}
	settle("the whole cluster's restart")

	f = (leader() + 2) % n
	t.Logf("wiping follower %d", f+1)
	m := c.Members[f]
	m.Kill()
	os.RemoveAll(m.DataDir)
	os.MkdirAll(m.DataDir, 0o755)
	os.WriteFile(filepath.Join(m.DataDir, "myid"), []byte(fmt.Sprintf("%d\n", f+1)), 0o644)
	if err := m.Restart(false); err != nil {
		t.Fatal(err)
	}
	settle("the wiped follower's restart")

	l = leader()
	t.Logf("pausing leader %d briefly", l+1)
	stopProcess(t, c.Members[l])
	time.Sleep(2 * time.Second)
	continueProcess(t, c.Members[l])
	settle("the leader's short pause")
}

func nemesisHistory(t *testing.T, n int, faults func(t *testing.T, c *ztest.Cluster, n int, timeout time.Duration)) {
	c := faultCluster(t, n)
	const timeout = 6 * time.Second
	setup, _ := faultSession(t, timeout, strings.Split(c.ConnectString(), ",")...)
	for _, p := range []string{"/h", "/h/k", "/h/seq"} {
		if _, err := setup.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := setup.Create("/h/counter", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	setup.Close()

	const clients = 5
	type history struct {
		acked, unknown map[string]bool
		seq            []string
		cas            []int
		problems       []string
	}
	hist := make([]*history, clients)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for ci := 0; ci < clients; ci++ {
		h := &history{acked: map[string]bool{}, unknown: map[string]bool{}}
		hist[ci] = h
		addrs := strings.Split(c.ConnectString(), ",")
		// Each client starts on another member.
		addrs = append(addrs[ci%len(addrs):], addrs[:ci%len(addrs)]...)
		conn, _ := faultSession(t, timeout, addrs...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			lastVersion := int32(-1)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("c%d-%d", ci, i)
				switch i % 3 {
				case 0:
					if _, err := conn.Create("/h/k/"+key, nil, 0, zk.WorldACL(zk.PermAll)); err == nil {
						h.acked[key] = true
					} else {
						h.unknown[key] = true
					}
				case 1:
					if name, err := conn.Create("/h/seq/s-", []byte(key), zk.FlagSequence, zk.WorldACL(zk.PermAll)); err == nil {
						h.seq = append(h.seq, strings.TrimPrefix(name, "/h/seq/"))
					}
				case 2:
					data, st, err := conn.Get("/h/counter")
					if err != nil {
						if err == zk.ErrSessionExpired {
							h.problems = append(h.problems, "session expired")
							return
						}
						time.Sleep(20 * time.Millisecond)
						continue
					}
					if st.Version < lastVersion {
						h.problems = append(h.problems, fmt.Sprintf("read counter version %d after %d", st.Version, lastVersion))
					}
					lastVersion = st.Version
					v, _ := strconv.Atoi(string(data))
					if _, err := conn.Set("/h/counter", []byte(strconv.Itoa(v+1)), st.Version); err == nil {
						h.cas = append(h.cas, v+1)
						lastVersion = st.Version + 1
					}
				}
			}
		}()
	}
	faults(t, c, n, timeout)
	close(stop)
	wg.Wait()

	type state struct {
		keys, seq []string
		seqData   map[string]string
		counter   string
		version   int32
	}
	var states []state
	for i, m := range c.Members {
		conn, _ := faultSession(t, 10*time.Second, m.Addr)
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
		if !slices.Equal(s.keys, states[0].keys) || !slices.Equal(s.seq, states[0].seq) || s.counter != states[0].counter {
			t.Errorf("member %d disagrees with member 1: %d/%d keys, %d/%d sequential, counter %s/%s", i+2,
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
		for _, p := range h.problems {
			t.Errorf("client %d: %s", ci, p)
		}
		for k := range h.acked {
			acked++
			if !present[k] {
				t.Errorf("client %d: acknowledged create of %s is lost", ci, k)
			}
		}
		for i, n := range h.seq {
			acked++
			if !seqPresent[n] {
				t.Errorf("client %d: acknowledged sequential node %s is lost", ci, n)
			}
			if i > 0 && n <= h.seq[i-1] {
				t.Errorf("client %d: sequential %s acknowledged after %s", ci, n, h.seq[i-1])
			}
		}
		for _, v := range h.cas {
			acked++
			if casAcked[v] {
				t.Errorf("two compare-and-sets both wrote %d", v)
			}
			casAcked[v] = true
		}
	}
	for _, k := range s.keys {
		var ci, i int
		fmt.Sscanf(k, "c%d-%d", &ci, &i)
		if ci < 0 || ci >= clients || !hist[ci].acked[k] && !hist[ci].unknown[k] {
			t.Errorf("node %s appeared that no client created", k)
		}
	}
	seen := map[string]bool{}
	for n, d := range s.seqData {
		if seen[d] {
			t.Errorf("one sequential create applied twice: %q (%s)", d, n)
		}
		seen[d] = true
	}
	final, _ := strconv.Atoi(s.counter)
	if int32(final) != s.version {
		t.Errorf("counter %d at version %d: a compare-and-set was applied twice or lost", final, s.version)
	}
	t.Logf("%d acknowledged writes checked; %d nodes, %d sequential, counter %d", acked, len(s.keys), len(s.seq), final)
}

// A member stopped gracefully (SIGTERM), leader or follower: its clients move on and
// keep their sessions and ephemerals, as ZooKeeper's shutdown closes no session.
func TestFaultGracefulStopKeepsSessions(t *testing.T) {
	c := faultCluster(t, 3)
	const timeout = 6 * time.Second
	for round, which := range []string{"leader", "follower"} {
		m := c.Leader()
		if which == "follower" {
			m = (m + 1) % 3
		}
		var addrs []string
		addrs = append(addrs, c.Members[m].Addr)
		for i, o := range c.Members {
			if i != m {
				addrs = append(addrs, o.Addr)
			}
		}
		s, events := faultSession(t, timeout, addrs...)
		path := fmt.Sprintf("/eph%d", round)
		if _, err := s.Create(path, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		t.Logf("stopping the %s, member %d", which, m+1)
		c.Members[m].Cmd.Process.Signal(syscall.SIGTERM)
		deadline := time.After(20 * time.Second)
		for moved := false; !moved; {
			select {
			case ev := <-events:
				t.Logf("%s client: %v %s", which, ev.State, ev.Server)
				if ev.State == zk.StateExpired {
					t.Fatalf("the %s's client's session expired", which)
				}
				moved = ev.State == zk.StateHasSession && ev.Server != c.Members[m].Addr
			case <-deadline:
				t.Fatalf("the %s's client did not move within 20s (running %v, state %v)\n%s", which, c.Members[m].Running(), s.State(), c.LogTails())
			}
		}
		for i, o := range c.Members {
			if i != m && !existsOn(t, o.Addr, path) {
				t.Errorf("member %d lost the ephemeral of a session whose %s stopped", i+1, which)
			}
		}
		for c.Members[m].Running() {
			time.Sleep(50 * time.Millisecond)
		}
		if err := c.Members[m].Restart(false); err != nil {
			t.Fatal(err)
		}
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

// Watches through every fault in turn (everyFault): clients that start on different
// members each watch ten nodes that a writer keeps changing, setting the next watch
// with the read the event asks for. A watch fires at most once, never for a change the
// client had already read (the read after the event must show a newer version), and a
// watch whose node changed after it was set fires, across the clients' reconnects
// (setWatches with their last zxid).
func TestFaultWatchesThroughFaults(t *testing.T) {
	longFault(t)
	if testing.Short() {
		t.Skip("starts processes")
	}
	const n, nodes, clients = 3, 10, 3
	c, err := ztest.StartZkraftCluster(n, ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	const timeout = 6 * time.Second
	all := strings.Split(c.ConnectString(), ",")
	writer, _ := faultSession(t, timeout, all...)
	if _, err := writer.Create("/w", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < nodes; i++ {
		if _, err := writer.Create(fmt.Sprintf("/w/%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := writer.Set(fmt.Sprintf("/w/%d", i%nodes), []byte(fmt.Sprint(i)), -1); err != nil {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	type watched struct {
		version int32
		ch      <-chan zk.Event
	}
	var mu sync.Mutex
	var problems []string
	fired := 0
	outstanding := make([][]watched, clients)
	conns := make([]*zk.Conn, clients)
	var watchers sync.WaitGroup
	for ci := 0; ci < clients; ci++ {
		addrs := append(all[ci%len(all):], all[:ci%len(all)]...)
		conn, _ := faultSession(t, timeout, addrs...)
		conns[ci] = conn
		outstanding[ci] = make([]watched, nodes)
		for i := 0; i < nodes; i++ {
			_, st, ch, err := conn.GetW(fmt.Sprintf("/w/%d", i))
			if err != nil {
				t.Fatal(err)
			}
			outstanding[ci][i] = watched{st.Version, ch}
		}
		for i := 0; i < nodes; i++ {
			watchers.Add(1)
			go func() {
				defer watchers.Done()
				path := fmt.Sprintf("/w/%d", i)
				for {
					mu.Lock()
					w := outstanding[ci][i]
					mu.Unlock()
					var ev zk.Event
					select {
					case ev = <-w.ch:
					case <-stop:
						return
					}
					if ev.Type != zk.EventNodeDataChanged {
						mu.Lock()
						problems = append(problems, fmt.Sprintf("client %d: %s: event %v", ci, path, ev))
						mu.Unlock()
						return
					}
					var st *zk.Stat
					var ch <-chan zk.Event
					for {
						var err error
						if _, st, ch, err = conn.GetW(path); err == nil {
							break
						}
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
					mu.Lock()
					fired++
					if st.Version <= w.version {
						problems = append(problems, fmt.Sprintf("client %d: %s: a watch set at version %d fired, and the read after it shows version %d", ci, path, w.version, st.Version))
					}
					outstanding[ci][i] = watched{st.Version, ch}
					mu.Unlock()
				}
			}()
		}
	}
	time.Sleep(time.Second)
	everyFault(t, c, n, timeout)
	close(stop)
	wg.Wait()
	watchers.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	// Every outstanding watch whose node changed since must fire now.
	final := make([]int32, nodes)
	for i := range final {
		_, st, err := writer.Get(fmt.Sprintf("/w/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		final[i] = st.Version
	}
	time.Sleep(5 * time.Second)
	for ci := range outstanding {
		for i, w := range outstanding[ci] {
			select {
			case ev := <-w.ch:
				if final[i] <= w.version {
					t.Errorf("client %d: /w/%d: a watch set at the final version %d fired: %v", ci, i, w.version, ev)
				}
				select {
				case ev, ok := <-w.ch: // go-zookeeper closes the channel after its event
					if ok {
						t.Errorf("client %d: /w/%d: a watch fired twice: %v", ci, i, ev)
					}
				default:
				}
			default:
				if final[i] > w.version {
					t.Errorf("client %d: /w/%d: the watch set at version %d never fired, the node is at %d", ci, i, w.version, final[i])
				}
			}
		}
	}
	t.Logf("%d watch events checked", fired)
}

// Every member stopped gracefully at once (SIGTERM), as an orchestrator stops a whole
// deployment: each exits promptly though the others go too, and the cluster comes back
// with every acknowledged write and its sessions.
func TestFaultWholeClusterGracefulStop(t *testing.T) {
	c := faultCluster(t, 3)
	const timeout = 10 * time.Second
	s, _ := faultSession(t, timeout, strings.Split(c.ConnectString(), ",")...)
	if _, err := s.Create("/kept", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := s.Create(fmt.Sprintf("/n%d", i), nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	for _, m := range c.Members {
		m.Cmd.Process.Signal(syscall.SIGTERM)
	}
	for i, m := range c.Members {
		for m.Running() {
			if time.Since(start) > 15*time.Second {
				t.Fatalf("member %d still runs 15s after SIGTERM\n%s", i+1, c.LogTails())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("all members exited %v after SIGTERM", time.Since(start))
	if err := c.Restart(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Members {
		if !existsOn(t, m.Addr, "/n99") || !existsOn(t, m.Addr, "/kept") {
			t.Errorf("%s lost acknowledged state across the stop", m.Addr)
		}
	}
}

// The lock recipe (go-zookeeper's Lock) through pauses of the leader and of followers,
// longer and shorter than the session timeout: two clients never hold the lock at once,
// unless the earlier holder was told meanwhile that it lost its connection (a client
// must then take its lock as lost: that is what a session's timeout promises).
func TestFaultLockThroughPauses(t *testing.T) {
	longFault(t)
	c := faultCluster(t, 3)
	const timeout = 4 * time.Second
	all := strings.Split(c.ConnectString(), ",")
	type holder struct {
		since   time.Time
		session int64
		lost    bool // told of a disconnect since it acquired
	}
	lastLoss := map[int]string{}
	stopping := false // the sessions are being closed: their locks go
	var mu sync.Mutex
	holders := map[int]*holder{}
	var problems []string
	acquired := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const clients = 4
	conns := make([]*zk.Conn, clients)
	for ci := 0; ci < clients; ci++ {
		addrs := all
		if ci < len(all) {
			addrs = []string{all[ci]} // pinned to one member: it cannot move
		}
		conn, events := faultSession(t, timeout, addrs...)
		conns[ci] = conn
		wg.Add(2)
		go func() {
			defer wg.Done()
			for {
				select {
				case ev := <-events:
					if ev.State == zk.StateDisconnected || ev.State == zk.StateExpired {
						mu.Lock()
						lastLoss[ci] = fmt.Sprintf("%v at %v", ev.State, time.Now().Format("15:04:05.000"))
						if h := holders[ci]; h != nil {
							h.lost = true
						}
						mu.Unlock()
					}
				case <-stop:
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				l := zk.NewLock(conn, "/lock", zk.WorldACL(zk.PermAll))
				if err := l.Lock(); err != nil {
					dropLockNodes(conn)
					continue
				}
				mu.Lock()
				now := time.Now()
				for other, h := range holders {
					if !h.lost && !stopping {
						problems = append(problems, fmt.Sprintf("client %d (session %x) took the lock at %v while client %d (session %x, now %x, last loss %s) held it since %v, connected throughout",
							ci, conn.SessionID(), now.Format("15:04:05.000"), other, h.session, conns[other].SessionID(), lastLoss[other], h.since.Format("15:04:05.000")))
						kids, _, _ := conn.Children("/lock")
						for _, k := range kids {
							_, st, err := conn.Get("/lock/" + k)
							problems = append(problems, fmt.Sprintf("  %s: %v %x", k, err, st.EphemeralOwner))
						}
					}
				}
				holders[ci] = &holder{since: now, session: conn.SessionID()}
				acquired++
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
				mu.Lock()
				delete(holders, ci)
				mu.Unlock()
				if l.Unlock() != nil {
					dropLockNodes(conn)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	for round, d := range []time.Duration{2 * timeout, timeout / 2, 2 * timeout, timeout / 2} {
		m := c.Leader()
		if round%2 == 1 {
			m = (m + 1) % 3
		}
		t.Logf("%v pausing member %d for %v", time.Now().Format("15:04:05.000"), m+1, d)
		stopProcess(t, c.Members[m])
		time.Sleep(d)
		continueProcess(t, c.Members[m])
		if err := c.AwaitServing(60 * time.Second); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	mu.Lock()
	stopping = true
	mu.Unlock()
	close(stop)
	for _, conn := range conns {
		conn.Close() // a Lock waiting for its turn returns
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		for i, m := range c.Members {
			t.Logf("--- member %d:\n%s", i+1, m.Log())
		}
	}
	if acquired < 20 {
		t.Errorf("the lock was taken only %d times", acquired)
	}
	t.Logf("the lock was taken %d times", acquired)
}

// dropLockNodes deletes the lock nodes of conn's session: go-zookeeper's Lock leaves its
// node behind when Lock fails after creating it or Unlock fails, and a node of a live
// session blocks every other client. It tries for up to ten seconds.
func dropLockNodes(conn *zk.Conn) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		kids, _, err := conn.Children("/lock")
		if err != nil {
			continue
		}
		left := false
		for _, k := range kids {
			_, st, err := conn.Get("/lock/" + k)
			if err == nil && st.EphemeralOwner == conn.SessionID() {
				if err := conn.Delete("/lock/"+k, -1); err != nil && err != zk.ErrNoNode {
					left = true
				}
			}
		}
		if !left {
			return
		}
	}
}

// A client that knows one member only, which is killed and restarted on a wiped data
// dir: the client comes back to it with its session and never reads older state than
// it read before.
func TestFaultWipedMemberKeepsItsClient(t *testing.T) {
	c := faultCluster(t, 3)
	l := c.Leader()
	f := (l + 1) % 3
	w := c.Members[f]
	const timeout = 10 * time.Second
	writer, _ := faultSession(t, timeout, c.Members[l].Addr)
	if _, err := writer.Create("/n", []byte("0"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 300; i++ {
		if _, err := writer.Set("/n", []byte(fmt.Sprint(i)), -1); err != nil {
			t.Fatal(err)
		}
	}
	client, events := faultSession(t, timeout, w.Addr)
	if _, err := client.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, st, err := client.Get("/n")
	if err != nil {
		t.Fatal(err)
	}
	w.Kill()
	os.RemoveAll(w.DataDir)
	os.MkdirAll(w.DataDir, 0o755)
	os.WriteFile(filepath.Join(w.DataDir, "myid"), []byte(fmt.Sprintf("%d\n", f+1)), 0o644)
	for i := 301; i <= 400; i++ {
		if _, err := writer.Set("/n", []byte(fmt.Sprint(i)), -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Restart(false); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for back := false; !back; {
		select {
		case ev := <-events:
			t.Logf("client: %v", ev.State)
			if ev.State == zk.StateExpired {
				t.Fatalf("the client's session expired\n%s", c.LogTails())
			}
			back = ev.State == zk.StateHasSession
		case <-deadline:
			t.Fatalf("the client did not get back to the wiped member within 30s\n%s", c.LogTails())
		}
	}
	_, st2, err := client.Get("/n")
	if err != nil {
		t.Fatal(err)
	}
	if st2.Version < st.Version {
		t.Errorf("the client read version %d of /n before and %d after its member was wiped", st.Version, st2.Version)
	}
	if ok, _, err := client.Exists("/eph"); err != nil || !ok {
		t.Errorf("the client's ephemeral: %v %v", ok, err)
	}
}

// longFault skips a scenario of 20 to 40 s unless ZKRAFT_FAULTS=full (make test-faults):
// make test runs the shorter ones, which cover the same faults.
func longFault(t *testing.T) {
	t.Helper()
	if os.Getenv("ZKRAFT_FAULTS") != "full" {
		t.Skip("a long fault scenario: make test-faults runs it")
	}
}

// faultCluster starts an n-process zkraft cluster, stopped when the test ends.
func faultCluster(t *testing.T, n int) *ztest.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	c, err := ztest.StartZkraftCluster(n, ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}
