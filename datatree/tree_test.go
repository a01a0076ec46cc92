package datatree

import (
	"reflect"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// A fresh ZooKeeper 3.8.0 standalone server (checked with kazoo): "/" cversion -1,
// "/zookeeper" cversion -2, "/zookeeper/config" READ-only with aversion -1, empty data,
// zk_znode_count 5, zk_approximate_data_size 44.
func TestNewMatchesZooKeeper(t *testing.T) {
	tr := New(Options{ExtendedTypes: true})
	cases := []struct {
		path string
		stat jute.Stat
		acl  []jute.ACL
	}{
		{"/", jute.Stat{Cversion: -1, NumChildren: 1}, world},
		{"/zookeeper", jute.Stat{Cversion: -2, NumChildren: 2}, world},
		{"/zookeeper/quota", jute.Stat{}, world},
		{"/zookeeper/config", jute.Stat{Aversion: -1}, aclOf(jute.PermRead, "world", "anyone")},
	}
	for _, c := range cases {
		data, st, code := tr.Get(c.path)
		if code != jute.OK || data == nil || len(data) != 0 {
			t.Errorf("%s: data %v code %v, want empty non-nil", c.path, data, code)
		}
		if st != c.stat {
			t.Errorf("%s: stat %+v, want %+v", c.path, st, c.stat)
		}
		acl, _, _ := tr.ACL(c.path)
		if !reflect.DeepEqual(acl, c.acl) {
			t.Errorf("%s: acl %v, want %v", c.path, acl, c.acl)
		}
	}
	if n := tr.NodeCount(); n != 5 {
		t.Errorf("NodeCount %d, want 5", n)
	}
	if s := tr.ApproximateDataSize(); s != 44 {
		t.Errorf("ApproximateDataSize %d, want 44", s)
	}
	if n, _ := tr.CountDescendants("/"); n != 3 {
		t.Errorf("CountDescendants(/) %d, want 3", n)
	}
	if n, _ := tr.CountDescendants("/zookeeper"); n != 2 {
		t.Errorf("CountDescendants(/zookeeper) %d, want 2", n)
	}
	// ZooKeeper's node map aliases "" to the root.
	if _, code := tr.Stat(""); code != jute.OK {
		t.Errorf(`Stat("") = %v, want the root`, code)
	}
	for _, p := range []string{"/zookeeper/", "/zookeeper//quota", "zookeeper", "/nope"} {
		if _, code := tr.Stat(p); code != jute.ErrNoNode {
			t.Errorf("Stat(%q) = %v, want NoNode", p, code)
		}
	}
}

func TestApproximateDataSizeTracksChanges(t *testing.T) {
	f := newFixture(t)
	f.mustCreate("/a", 0) // 2 + 1
	f.apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: "/a", Data: []byte("hello"), Version: -1})
	f.apply(anyone, jute.OpSetData, &jute.SetDataRequest{Path: "/", Data: []byte("xy"), Version: -1})
	f.mustCreate("/é", 0) // Java length 2, not 3 bytes
	want := int64(44) + 2 + 5 + 2*2 + 2 + 1
	if got := f.tree.ApproximateDataSize(); got != want || got != f.tree.computeDataSize() {
		t.Fatalf("size %d (recomputed %d), want %d", got, f.tree.computeDataSize(), want)
	}
	f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: "/a", Version: -1})
	if got := f.tree.ApproximateDataSize(); got != want-7 {
		t.Fatalf("after delete %d, want %d", got, want-7)
	}
}

func TestValidatePath(t *testing.T) {
	// PathUtils.validatePath.
	good := []string{"/", "/a", "/a/b", "/a.b", "/...", "/a/..b", "/.a", "/é", "/a b"}
	bad := []string{"", "a", "/a/", "//", "/a//b", "/.", "/..", "/a/.", "/a/../b", "/a\x00",
		"/a\x01", "/a\x7f", "/a\u0085", "/a\ue000", "/a\ufff0", "/a\U0001F600", "/a\xff"}
	for _, p := range good {
		if ValidatePath(p) != jute.OK {
			t.Errorf("ValidatePath(%q) refused", p)
		}
	}
	for _, p := range bad {
		if ValidatePath(p) != jute.ErrBadArguments {
			t.Errorf("ValidatePath(%q) accepted", p)
		}
	}
}

func TestChildrenSortedAcrossChunks(t *testing.T) {
	tr := New(Options{})
	c := &children{}
	names := map[string]nodeID{}
	x := uint32(7)
	grew, placed, keyed, located := false, false, false, false
	for i := 0; i < 30000; i++ {
		x = x*1664525 + 1013904223
		name := string(rune('a'+x%26)) + string(rune('a'+(x>>8)%26)) + string(rune('a'+(x>>16)%26)) + string(rune('a'+(x>>24)%8))
		if (x>>29)&1 == 0 {
			name = "prefixed" + name // half share one key: their names are compared
		}
		got, at := c.locate(tr, name)
		if id, ok := names[name]; got != id || at.id != id {
			t.Fatalf("locate %q gave %d (place %+v), want %d", name, got, at, id)
		} else if ok {
			if (x>>6)&1 == 0 {
				at = childPlace{} // half removed where locate found them, half by unlink's own search
			}
			located = located || at.ok
			if got := c.remove(tr, name, at); got != id {
				t.Fatalf("remove %q gave %d, want %d", name, got, id)
			}
			delete(names, name)
		} else {
			if n := c.n; c.remove(tr, name, at) != 0 || c.n != n {
				t.Fatalf("remove of absent %q at %+v took a child", name, at)
			}
			id, _ := tr.newNode(name, nil, 0, storedStat{})
			names[name] = id
			if (x>>5)&1 == 0 {
				at = childPlace{} // half placed by locate's search, half by insert's own
			}
			placed = placed || at.ok
			c.add(tr, id, name, at)
		}
		grew = grew || len(c.chunks) > 8
		keyed = keyed || c.wide != nil && c.wide.keys != nil
		if i%997 == 0 {
			checkChildren(t, tr, c, names)
		}
	}
	if !grew || !placed || !keyed || !located {
		t.Fatalf("the list never spanned many chunks (%v), locate never placed an add (%v), the list never had keys (%v), or locate never placed a remove (%v)", grew, placed, keyed, located)
	}
	checkChildren(t, tr, c, names)
	// Back to one chunk and to none, in map order, each where locate finds it.
	for name, id := range names {
		_, at := c.locate(tr, name)
		if got := c.remove(tr, name, at); got != id {
			t.Fatalf("remove %q gave %d, want %d", name, got, id)
		}
		delete(names, name)
		if len(names) < 1200 || len(names)%997 == 0 {
			checkChildren(t, tr, c, names)
		}
	}
}

// checkChildren checks c against names: order, lookups of present and absent names, the
// count, the copies of each chunk's last name, and the keys of a list without an index.
func checkChildren(t *testing.T, tr *Tree, c *children, names map[string]nodeID) {
	t.Helper()
	if (c.wide != nil) != (len(c.chunks) > 1) || c.wide != nil && (len(c.wide.lasts) != len(c.chunks) || len(c.wide.lastKeys) != len(c.chunks)) {
		t.Fatalf("%d chunks, wide %v", len(c.chunks), c.wide)
	}
	keyed := c.wide != nil && c.wide.keys != nil
	if keyed != (c.wide != nil && c.index == nil) || keyed && len(c.wide.keys) != len(c.chunks) {
		t.Fatalf("%d children in %d chunks, index %v: keys %v", c.n, len(c.chunks), c.index != nil, keyed)
	}
	for i, ch := range c.chunks {
		if len(ch) == 0 {
			t.Fatalf("chunk %d is empty", i)
		}
		if c.wide != nil && (c.wide.lasts[i] != tr.nameOf(ch[len(ch)-1]) || c.wide.lastKeys[i] != prefixKey(c.wide.lasts[i])) {
			t.Fatalf("chunk %d: last name %q, copy %q, its key %x", i, tr.nameOf(ch[len(ch)-1]), c.wide.lasts[i], c.wide.lastKeys[i])
		}
		if !keyed {
			continue
		}
		if len(c.wide.keys[i]) != len(ch) {
			t.Fatalf("chunk %d: %d ids, %d keys", i, len(ch), len(c.wide.keys[i]))
		}
		for j, id := range ch {
			if c.wide.keys[i][j] != prefixKey(tr.nameOf(id)) {
				t.Fatalf("chunk %d: the key of %q is wrong", i, tr.nameOf(id))
			}
		}
	}
	prev := ""
	count := 0
	c.each(func(id nodeID) bool {
		name := tr.nameOf(id)
		if name <= prev && count > 0 {
			t.Fatalf("order broken at %q after %q", name, prev)
		}
		if names[name] != id || c.get(tr, name) != id {
			t.Fatalf("lookup of %q broken", name)
		}
		if _, ok := names[name+"~"]; !ok && c.get(tr, name+"~") != 0 {
			t.Fatalf("absent %q found", name+"~")
		}
		prev = name
		count++
		return true
	})
	if count != len(names) || c.len() != len(names) {
		t.Fatalf("count %d len %d, want %d", count, c.len(), len(names))
	}
}

// Prefix keys order as their names do wherever they differ: names that begin alike,
// one a prefix of the other, longer than a key, and bytes above 0x7f.
func TestPrefixKeysOrderAsNames(t *testing.T) {
	names := []string{"", "a", "a0", "ab", "abcdefgh", "abcdefghi", "abcdefgz", "abcdefg", "b", "\x7f", "\x80", "é", "zzzzzzzzzz", "w17-1234", "w17-12345", "w2-1"}
	x := uint32(3)
	for range 2000 {
		x = x*1664525 + 1013904223
		b := make([]byte, x%12)
		for i := range b {
			x = x*1664525 + 1013904223
			b[i] = byte('a' + x%3) // few letters: long common prefixes
		}
		names = append(names, string(b))
	}
	for _, a := range names {
		for _, b := range names[:64] {
			ka, kb := prefixKey(a), prefixKey(b)
			if ka < kb && !(a < b) || ka > kb && !(a > b) || a == b && ka != kb {
				t.Fatalf("%q (%x) against %q (%x)", a, ka, b, kb)
			}
		}
	}
}
