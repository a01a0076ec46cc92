package quorum

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/session"
)

// Members seeded one by one from the same backup hold identical trees (no clock in the
// seeding), and a store seeded so loads back as the state it was given, with the old
// membership emptied for the first leader to rewrite.
func TestSeedIsDeterministic(t *testing.T) {
	tree := datatree.New(datatree.Options{})
	tree.SetConfig(datatree.Txn{Zxid: 40, Time: 1000}, []byte("server.1=old:2888:3888:participant\nversion=28"))
	b, err := persistence.EncodeState(41, tree, session.NewTable())
	if err != nil {
		t.Fatal(err)
	}
	var digests []uint64
	for i := 0; i < 2; i++ {
		st, err := persistence.ReadState(bytes.NewReader(b), datatree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if err := Seed(DefaultConfig(dir), st); err != nil {
			t.Fatal(err)
		}
		if err := Seed(DefaultConfig(dir), st); err == nil {
			t.Fatal("seeded a store twice")
		}
		back, err := LoadOffline(dir, datatree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if back.Zxid != 41 {
			t.Fatalf("zxid %d", back.Zxid)
		}
		if data, _, _ := back.Tree.Get(datatree.ConfigPath); len(data) != 0 {
			t.Fatalf("old membership kept: %q", data)
		}
		digests = append(digests, back.Tree.Digest())
		time.Sleep(5 * time.Millisecond)
	}
	if digests[0] != digests[1] {
		t.Fatal("two members seeded from one backup differ")
	}
}

// A backup is read as it is: restore and export create nothing in the store they read
// (before, opening it for writing added raft.db and a 16 MiB prepared log segment to the
// backup, and a backup on read-only media could not be restored at all).
func TestLoadOfflineLeavesTheStoreAsItWas(t *testing.T) {
	tree := datatree.New(datatree.Options{})
	open := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "world", Id: "anyone"}}}
	if _, code, _ := tree.Apply(datatree.Txn{Zxid: 7, Time: 1000}, jute.OpCreate, &jute.CreateRequest{Path: "/kept", Data: []byte("v"), Acl: open}); code != jute.OK {
		t.Fatal(code)
	}
	b, err := persistence.EncodeState(7, tree, session.NewTable())
	if err != nil {
		t.Fatal(err)
	}
	st, err := persistence.ReadState(bytes.NewReader(b), datatree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	if err := Seed(DefaultConfig(persistence.StoreDir(data)), st); err != nil {
		t.Fatal(err)
	}
	backup := t.TempDir()
	if _, err := persistence.BackupSnapshot(data, backup); err != nil {
		t.Fatal(err)
	}
	before := listFiles(t, backup)
	back, err := LoadOffline(persistence.StoreDir(backup), datatree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, _, code := back.Tree.Get("/kept"); code != jute.OK || string(d) != "v" || back.Zxid != 7 {
		t.Fatalf("loaded %q %v at zxid %d", d, code, back.Zxid)
	}
	if after := listFiles(t, backup); !slices.Equal(after, before) {
		t.Fatalf("the backup changed:\n before %q\n after  %q", before, after)
	}
	if _, err := LoadOffline(filepath.Join(backup, "nothing-here"), datatree.Options{}); err == nil {
		t.Fatal("a directory without a store was loaded")
	}
}

// listFiles names every file and directory under dir with its size.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d", p, fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
