package server

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// Crash tests: SIGKILL during a write load, at a random moment, then restart on the same
// data dirs. Every write a client saw acknowledged must be there; nothing no client
// attempted may be.

// writeLoad runs clients that create /crash/c<i>-<n> until stop closes, recording what
// was acknowledged and what was attempted without an answer.
type writeLoad struct {
	mu        sync.Mutex
	acked     map[string]bool
	attempted map[string]bool
	wg        sync.WaitGroup
	stop      chan struct{}
}

func startWriteLoad(t *testing.T, round, clients int, connect string) *writeLoad {
	t.Helper()
	w := &writeLoad{acked: map[string]bool{}, attempted: map[string]bool{}, stop: make(chan struct{})}
	for c := 0; c < clients; c++ {
		conn, _, err := zk.Connect(strings.Split(connect, ","), 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer conn.Close()
			for n := 0; n < 100000; n++ {
				select {
				case <-w.stop:
					return
				default:
				}
				name := fmt.Sprintf("r%d-c%d-%d", round, c, n)
				w.mu.Lock()
				w.attempted[name] = true
				w.mu.Unlock()
				if _, err := conn.Create("/crash/"+name, []byte(name), 0, zk.WorldACL(zk.PermAll)); err == nil {
					w.mu.Lock()
					w.acked[name] = true
					w.mu.Unlock()
				} else if err == zk.ErrNoServer || err == zk.ErrConnectionClosed || err == zk.ErrSessionExpired {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	return w
}

func (w *writeLoad) finish() {
	close(w.stop)
	w.wg.Wait()
}

// checkLoad reads /crash through addr (after a sync) and checks it against the loads.
func checkLoads(t *testing.T, addr string, loads []*writeLoad) {
	t.Helper()
	conn := zkSession(t, 10*time.Second, addr)
	var kids []string
	if err := retryLoss(t, func() (err error) {
		if _, err = conn.Sync("/crash"); err == nil {
			kids, _, err = conn.Children("/crash")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, k := range kids {
		present[k] = true
	}
	acked := 0
	for _, w := range loads {
		for name := range w.acked {
			acked++
			if !present[name] {
				t.Errorf("acknowledged create %s lost (%s)", name, addr)
			}
		}
	}
	for k := range present {
		ok := false
		for _, w := range loads {
			ok = ok || w.attempted[k]
		}
		if !ok {
			t.Errorf("%s is there but no client created it", k)
		}
	}
	if acked < 50 {
		t.Errorf("only %d acknowledged writes before the crashes", acked)
	}
	t.Logf("%s: %d acknowledged creates checked, %d present", addr, acked, len(kids))
}

func createCrashRoot(t *testing.T, connect string) {
	t.Helper()
	c := zkSession(t, 10*time.Second, strings.Split(connect, ",")...)
	if _, err := c.Create("/crash", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// With forceSync=no too: a killed process leaves its unsynced writes in the page cache
// (persistence/force_sync.go); only a crash of the machine may lose them.
func TestCrashStandaloneKeepsAcknowledgedWrites(t *testing.T) {
	for _, forceSync := range []string{"yes", "no"} {
		t.Run("forceSync="+forceSync, func(t *testing.T) {
			s, err := ztest.StartZkraft(ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"forceSync": forceSync}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Stop() })
			createCrashRoot(t, s.Addr)
			var loads []*writeLoad
			for round := 0; round < 3; round++ {
				w := startWriteLoad(t, round, 4, s.Addr)
				loads = append(loads, w)
				time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
				s.Kill()
				w.finish()
				if err := s.Restart(true); err != nil {
					t.Fatal(err)
				}
			}
			checkLoads(t, s.Addr, loads)
		})
	}
}

func TestCrashWholeClusterKeepsAcknowledgedWrites(t *testing.T) {
	c := startZkraftCluster(t)
	createCrashRoot(t, c.ConnectString())
	var loads []*writeLoad
	for round := 0; round < 2; round++ {
		w := startWriteLoad(t, round, 4, c.ConnectString())
		loads = append(loads, w)
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		for _, m := range c.Members { // as close to together as a power cut
			m.Kill()
		}
		w.finish()
		if err := c.Restart(60 * time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range c.Members {
		checkLoads(t, m.Addr, loads)
	}
}
