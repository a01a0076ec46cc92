package watch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestZooKeeperWatchMemory measures what ZooKeeper 3.8's WatchManager spends on the
// watches TestWatchMemory gives the registry: 5 sessions, each with a data and a child
// watch on the same memPaths paths. It reads ZooKeeper's live heap (jmap -histo:live,
// which runs a full GC first) once the nodes exist and the sessions are connected, and
// again once every watch is set, and logs the difference per watch and the classes that
// grew. It starts a real ZooKeeper and takes a minute or two, so it runs only when
// ZKRAFT_WATCHMEM_ZK=1.
func TestZooKeeperWatchMemory(t *testing.T) {
	if os.Getenv("ZKRAFT_WATCHMEM_ZK") != "1" {
		t.Skip("set ZKRAFT_WATCHMEM_ZK=1 to measure ZooKeeper's WatchManager")
	}
	if err := ztest.Available(); err != nil {
		t.Skip(err)
	}
	srv, err := ztest.StartZooKeeper(ztest.Options{JavaHeap: "2g", Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	pid := srv.Cmd.Process.Pid

	const sessions = 5
	conns := make([]*zk.Conn, sessions)
	for i := range conns {
		c, _, err := zk.Connect([]string{srv.Addr}, 30*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	paths := memPathList()
	parents := map[string]bool{}
	for _, p := range paths {
		parents[p[:strings.LastIndexByte(p, '/')]] = true
	}
	for p := range parents {
		if _, err := conns[0].Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(p, err)
		}
	}
	parallel(t, paths, func(p string) error {
		_, err := conns[0].Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		return err
	})
	t.Logf("created %d nodes", len(paths))

	before := liveHisto(t, pid)
	for _, c := range conns {
		parallel(t, paths, func(p string) error {
			if _, _, _, err := c.GetW(p); err != nil {
				return err
			}
			_, _, _, err := c.ChildrenW(p)
			return err
		})
	}
	if out, err := ztest.FourLetter(srv.Addr, "wchs"); err == nil {
		t.Logf("wchs: %s", strings.TrimSpace(out))
	}
	after := liveHisto(t, pid)
	watches := 2 * sessions * len(paths)
	delta := after.total - before.total
	t.Logf("ZooKeeper live heap: %d before, %d after %d watches: %d bytes, %.1f bytes per watch",
		before.total, after.total, watches, delta, float64(delta)/float64(watches))
	type grown struct {
		class string
		bytes int64
	}
	var gs []grown
	for c, b := range after.classes {
		if d := b - before.classes[c]; d > 0 {
			gs = append(gs, grown{c, d})
		}
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].bytes > gs[j].bytes })
	for i := 0; i < len(gs) && i < 10; i++ {
		t.Logf("  %-50s +%d bytes (%.1f per watch)", gs[i].class, gs[i].bytes, float64(gs[i].bytes)/float64(watches))
	}
}

// parallel runs f on every path from 32 goroutines (one session pipelines their requests).
func parallel(t *testing.T, paths []string, f func(string) error) {
	t.Helper()
	const workers = 32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(paths); i += workers {
				if err := f(paths[i]); err != nil {
					errs <- fmt.Errorf("%s: %w", paths[i], err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

type histo struct {
	total   int64
	classes map[string]int64
}

// liveHisto runs a full GC in process pid and returns its live heap by class
// (jmap -histo:live).
func liveHisto(t *testing.T, pid int) histo {
	t.Helper()
	out, err := exec.Command("jmap", "-histo:live", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Fatalf("jmap: %v", err)
	}
	h := histo{classes: map[string]int64{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "Total":
			h.total, _ = strconv.ParseInt(f[2], 10, 64)
		case len(f) >= 4 && strings.HasSuffix(f[0], ":"):
			b, _ := strconv.ParseInt(f[2], 10, 64)
			h.classes[f[3]] += b
		}
	}
	if h.total == 0 {
		t.Fatalf("jmap printed no total:\n%s", out)
	}
	return h
}
