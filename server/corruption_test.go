package server

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
)

// A server refuses to start from a damaged store and says which file and what is wrong;
// it never serves what it could read of it.
func TestDamagedStoreIsRefusedAtStart(t *testing.T) {
	cases := []struct {
		name, file string
		damage     func(t *testing.T, store string)
	}{
		{"flipped bit in the log", "wal-", func(t *testing.T, store string) {
			if flipInLog(t, store, "after-the-snapshot") == 0 {
				t.Fatal("entry not found in the transaction log")
			}
		}},
		{"flipped bit in the snapshot", "state.bin", func(t *testing.T, store string) {
			snaps, _ := filepath.Glob(filepath.Join(store, "snapshots", "*", "state.bin"))
			if len(snaps) == 0 {
				t.Fatal("no snapshot written")
			}
			b, _ := os.ReadFile(snaps[0])
			b[len(b)/2] ^= 0x01
			os.WriteFile(snaps[0], b, 0o644)
		}},
		{"snapshot cut short", "state.bin", func(t *testing.T, store string) {
			snaps, _ := filepath.Glob(filepath.Join(store, "snapshots", "*", "state.bin"))
			if len(snaps) == 0 {
				t.Fatal("no snapshot written")
			}
			fi, _ := os.Stat(snaps[0])
			os.Truncate(snaps[0], fi.Size()/2)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := startServer(t, func(cfg *Config) { cfg.DataDir = dir })
			cl := dial(t, s.Addr().String())
			cl.connect(0, nil)
			for _, p := range []string{"/a", "/b"} {
				if h := cl.call(jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte("before"), Acl: openACL}, nil); h.Err != 0 {
					t.Fatalf("create %s: %d", p, h.Err)
				}
			}
			if err := s.node.TakeSnapshot(); err != nil {
				t.Fatal(err)
			}
			if h := cl.call(jute.OpCreate, &jute.CreateRequest{Path: "/c", Data: []byte("after-the-snapshot"), Acl: openACL}, nil); h.Err != 0 {
				t.Fatalf("create /c: %d", h.Err)
			}
			s.Close()
			c.damage(t, filepath.Join(dir, "zkraft"))
			cfg := DefaultConfig()
			cfg.ClientPort, cfg.ClientPortAddress, cfg.DataDir = 0, "127.0.0.1", dir
			s2, err := New(cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = s2.Start()
			if err == nil {
				s2.Close()
				t.Fatal("started from a damaged store")
			}
			if !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), "damaged") {
				t.Fatalf("the error does not name %s as damaged: %v", c.file, err)
			}
			t.Log(err)
		})
	}
}

// A member with a damaged store is refused at start; once wiped it is rebuilt from the
// leader and ends with the same tree as the others.
func TestClusterRebuildsWipedMember(t *testing.T) {
	tc := newTestCluster(t, 3)
	c := dial(t, tc.addr(tc.leader()))
	c.connect(0, nil)
	for i := 0; i < 30; i++ {
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: fmt.Sprintf("/n%02d", i), Data: []byte(fmt.Sprintf("member-data-%02d", i)), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create: %d", h.Err)
		}
	}
	tc.converge()
	f := tc.follower()
	tc.stop(f)
	store := persistence.StoreDir(tc.cfgs[f].DataDir)
	if flipInLog(t, store, "member-data-17") == 0 {
		t.Fatal("entry not found in the member's transaction log")
	}
	s, err := New(tc.cfgs[f], nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), ".log is damaged") {
		s.Close()
		t.Fatalf("a member with a damaged log started or said something else: %v", err)
	}
	if _, err := persistence.Wipe(tc.cfgs[f].DataDir, time.Now()); err != nil {
		t.Fatal(err)
	}
	tc.start(f)
	tc.converge()
	r := dial(t, tc.addr(f))
	r.connect(0, nil)
	var gd jute.GetDataResponse
	if h := r.call(jute.OpGetData, &jute.GetDataRequest{Path: "/n17"}, &gd); h.Err != 0 || string(gd.Data) != "member-data-17" {
		t.Fatalf("rebuilt member: %d %q", h.Err, gd.Data)
	}
}

// flipInLog flips a bit in every copy of needle in the store's transaction log segments
// and says how many it found.
func flipInLog(t *testing.T, store, needle string) int {
	t.Helper()
	segs, _ := filepath.Glob(filepath.Join(persistence.WALDir(store), "wal-*.log"))
	found := 0
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for i := bytes.Index(b, []byte(needle)); i >= 0; i = bytes.Index(b, []byte(needle)) {
			b[i+5] ^= 0x20
			n++
		}
		if n > 0 {
			os.WriteFile(p, b, 0o644)
			found += n
		}
	}
	return found
}
