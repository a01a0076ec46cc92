package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkraft/zkraft/jute"
)

// The tree is filled to its cap: writes that grow it are refused with QuotaExceeded
// while reads, shrinking writes, deletes and new sessions work; after deletes it grows
// again.
func TestTreeMemoryCap(t *testing.T) {
	const limit = 256 << 10
	s := startServer(t, func(c *Config) { c.TreeMemoryLimit = limit })
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	data := make([]byte, 4096)
	create := func(path string, flags int32) jute.Code {
		return jute.Code(c.call(jute.OpCreate, &jute.CreateRequest{Path: path, Data: data, Acl: openACL, Flags: flags}, &jute.CreateResponse{}).Err)
	}
	created := 0
	for ; created < 1000; created++ {
		code := create(fmt.Sprintf("/n%04d", created), 0)
		if code == jute.ErrQuotaExceeded {
			break
		}
		if code != jute.OK {
			t.Fatalf("create %d: %v", created, code)
		}
		if created%20 == 19 {
			time.Sleep(memSampleEvery) // let the cap see the tree grow
		}
	}
	if created*len(data) < limit/2 || created >= 1000 {
		t.Fatalf("%d creates of 4 KiB before the 256 KiB cap refused one", created)
	}
	t.Logf("refused after %d creates", created)
	refusals := []struct {
		name string
		op   int32
		req  jute.Record
	}{
		{"ephemeral create", jute.OpCreate, &jute.CreateRequest{Path: "/eph", Acl: openACL, Flags: jute.FlagEphemeral}},
		{"setData that grows", jute.OpSetData, &jute.SetDataRequest{Path: "/n0000", Data: make([]byte, 8192), Version: -1}},
		{"multi with a create", jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{
			{Type: jute.OpSetData, Req: &jute.SetDataRequest{Path: "/n0001", Data: []byte("x"), Version: -1}},
			{Type: jute.OpCreate, Req: &jute.CreateRequest{Path: "/m", Acl: openACL}}}}},
	}
	for _, r := range refusals {
		if h := c.call(r.op, r.req, nil); jute.Code(h.Err) != jute.ErrQuotaExceeded {
			t.Fatalf("%s at the cap: %v, want QuotaExceeded", r.name, jute.Code(h.Err))
		}
	}
	var got jute.GetDataResponse
	if h := c.call(jute.OpGetData, &jute.GetDataRequest{Path: "/n0001"}, &got); h.Err != 0 || len(got.Data) != len(data) {
		t.Fatalf("getData at the cap: %d, %d bytes (the refused multi must not have applied)", h.Err, len(got.Data))
	}
	if h := c.call(jute.OpSetData, &jute.SetDataRequest{Path: "/n0000", Data: []byte("small"), Version: -1}, &jute.SetDataResponse{}); h.Err != 0 {
		t.Fatalf("a setData that shrinks the tree at the cap: %d", h.Err)
	}
	other := dial(t, s.Addr().String())
	if resp := other.connect(0, nil); resp.SessionId == 0 {
		t.Fatal("no new session at the cap")
	}
	for i := 0; i < created/2; i++ {
		if h := c.call(jute.OpDelete, &jute.DeleteRequest{Path: fmt.Sprintf("/n%04d", i), Version: -1}, nil); h.Err != 0 {
			t.Fatalf("delete at the cap: %d", h.Err)
		}
	}
	time.Sleep(2 * memSampleEvery)
	if code := create("/again", 0); code != jute.OK {
		t.Fatalf("create after deletes freed room: %v", code)
	}
	if n := s.memCap.refused.Load(); n < 4 {
		t.Fatalf("%d refusals counted, want at least 4", n)
	}
}
