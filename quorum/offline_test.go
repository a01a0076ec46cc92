package quorum

import (
	"bytes"
	"testing"
	"time"

	"github.com/zkraft/zkraft/datatree"
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
