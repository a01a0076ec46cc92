package server

import (
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/jute"
)

// With reconfig disabled, ZooKeeper 3.8 shows each member's static configuration in
// /zookeeper/config with version 0 and mzxid 0 (ZKDatabase.initConfigInZKDatabase with
// the configuration's version as the zxid); with reconfig enabled, the version is the
// zxid that established it. cli_mt's "config" showed zkraft's entry zxid instead.
func TestConfigShownAsZooKeeperShowsIt(t *testing.T) {
	const members = "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\n" +
		"server.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n"
	stored := members + "version=1f"
	st := jute.Stat{Mzxid: 0x1f, Mtime: 1700000000000, Version: -1, Aversion: -1, DataLength: int32(len(stored))}
	for _, c := range []struct {
		name            string
		reconfigEnabled bool
		data            string
		wantData        string
		wantMzxid       int64
	}{
		{"reconfig disabled", false, stored, members + "version=0", 0},
		{"reconfig enabled", true, stored, stored, 0x1f},
		{"standalone (empty)", false, "", "", 0x1f},
		{"not a membership", false, "garbage", "garbage", 0x1f},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := st
			in.DataLength = int32(len(c.data))
			data, got := configShown(c.reconfigEnabled, []byte(c.data), in)
			if string(data) != c.wantData {
				t.Errorf("data %q, want %q", data, c.wantData)
			}
			want := in
			want.Mzxid, want.DataLength = c.wantMzxid, int32(len(c.wantData))
			if got != want {
				t.Errorf("stat %+v, want %+v", got, want)
			}
		})
	}
}

// A super user's setData of /zookeeper/config is NoAuth: zkraft reads the membership back
// from that node when it restores a snapshot, where a super user's "garbage" (which
// ZooKeeper 3.8 stores, to no effect on its membership) stopped every restart with a
// panic, and a follower that installed the snapshot with it.
func TestSuperUserCannotWriteTheConfigNode(t *testing.T) {
	dir := t.TempDir()
	mod := func(c *Config) { c.DataDir, c.SuperDigest = dir, datatree.DigestID("super:boss") }
	s := startServer(t, mod)
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	if h := c.call(jute.OpAuth, &jute.AuthPacket{Scheme: "digest", Auth: []byte("super:boss")}, nil); h.Err != 0 {
		t.Fatalf("addauth: %d", h.Err)
	}
	set := &jute.SetDataRequest{Path: datatree.ConfigPath, Data: []byte("garbage"), Version: -1}
	c.expectErr("setData of the config node", c.call(jute.OpSetData, set, &jute.SetDataResponse{}), jute.ErrNoAuth)
	var mr jute.MultiResponse
	c.expectErr("multi", c.call(jute.OpMulti, &jute.MultiRequest{Ops: []jute.MultiOp{{Type: jute.OpSetData, Req: set}}}, &mr), jute.OK)
	if len(mr.Results) != 1 || mr.Results[0].Err != jute.ErrNoAuth {
		t.Fatalf("setData of the config node in a multi: %+v, want NoAuth", mr.Results)
	}
	// Its ACL may still change (ZooKeeper lets the super user), and grants no setData.
	c.expectErr("setACL of the config node", c.call(jute.OpSetACL, &jute.SetACLRequest{Path: datatree.ConfigPath, Acl: openACL, Version: -1}, &jute.SetACLResponse{}), jute.OK)
	o := dial(t, s.Addr().String())
	o.connect(0, nil)
	o.expectErr("setData with WRITE in the ACL", o.call(jute.OpSetData, set, &jute.SetDataResponse{}), jute.ErrNoAuth)
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := startServer(t, mod)
	c2 := dial(t, s2.Addr().String())
	c2.connect(0, nil)
	var gd jute.GetDataResponse
	if h := c2.call(jute.OpGetData, &jute.GetDataRequest{Path: datatree.ConfigPath}, &gd); h.Err != 0 || len(gd.Data) != 0 || gd.Stat.Version != 0 {
		t.Fatalf("config node after the restart: %d %q %+v", h.Err, gd.Data, gd.Stat)
	}
}
