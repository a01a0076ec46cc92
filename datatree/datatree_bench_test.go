package datatree

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

func BenchmarkCreateSequential(b *testing.B) {
	tr := New(Options{ExtendedTypes: true})
	tr.Apply(Txn{Zxid: 1}, jute.OpCreate, &jute.CreateRequest{Path: "/q", Acl: world})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tr.Apply(Txn{Zxid: int64(i + 2)}, jute.OpCreate, &jute.CreateRequest{Path: "/q/n", Data: []byte("x"), Acl: world, Flags: jute.FlagPersistentSequential})
	}
}

func BenchmarkCreateRandomNames(b *testing.B) {
	tr := New(Options{ExtendedTypes: true})
	tr.Apply(Txn{Zxid: 1}, jute.OpCreate, &jute.CreateRequest{Path: "/r", Acl: world})
	x := uint64(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		tr.Apply(Txn{Zxid: int64(i + 2)}, jute.OpCreate, &jute.CreateRequest{Path: "/r/" + strconv.FormatUint(x>>20, 36), Acl: world})
	}
}

func BenchmarkGet(b *testing.B) {
	tr := New(Options{ExtendedTypes: true})
	paths := []string{}
	zxid := int64(0)
	for _, d := range []string{"/a", "/a/b", "/a/b/c"} {
		zxid++
		tr.Apply(Txn{Zxid: zxid}, jute.OpCreate, &jute.CreateRequest{Path: d, Acl: world})
	}
	for i := 0; i < 10000; i++ {
		zxid++
		p := "/a/b/c/" + strconv.Itoa(i)
		tr.Apply(Txn{Zxid: zxid}, jute.OpCreate, &jute.CreateRequest{Path: p, Data: []byte("v"), Acl: world})
		paths = append(paths, p)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, code := tr.Get(paths[i%len(paths)]); code != jute.OK {
			b.Fatal(code)
		}
	}
}

// BenchmarkGetRandom reads random znodes of a tree of 1,000 parents' children under the
// root (fillTree): how a lookup's cost grows with the tree.
func BenchmarkGetRandom(b *testing.B) {
	for _, n := range []int{10_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			tr := fillTree(b, n/1000, 1000, 100)
			paths := make([]string, 1<<16)
			for i := range paths {
				k := rand.IntN(n)
				paths[i] = fmt.Sprintf("/p%04d/n%06d", k/1000, k%1000)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, code := tr.Get(paths[i&(len(paths)-1)]); code != jute.OK {
					b.Fatal(code)
				}
			}
		})
	}
}

// BenchmarkDeleteRandomNames deletes b.N children of one parent, created beforehand
// (untimed) with random names, in another random order: a delete's searches in a list
// far beyond the name index.
func BenchmarkDeleteRandomNames(b *testing.B) {
	tr := New(Options{ExtendedTypes: true})
	tr.Apply(Txn{Zxid: 1}, jute.OpCreate, &jute.CreateRequest{Path: "/r", Acl: world})
	paths := make([]string, b.N)
	x := uint64(1)
	for i := range paths {
		x = x*6364136223846793005 + 1442695040888963407
		paths[i] = "/r/" + strconv.FormatUint(x>>20, 36)
		tr.Apply(Txn{Zxid: int64(i + 2)}, jute.OpCreate, &jute.CreateRequest{Path: paths[i], Acl: world})
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	b.ReportAllocs()
	b.ResetTimer()
	for i, p := range paths {
		if _, code, _ := tr.Apply(Txn{Zxid: int64(b.N + i + 2)}, jute.OpDelete, &jute.DeleteRequest{Path: p, Version: -1}); code != jute.OK {
			b.Fatal(p, code)
		}
	}
}
