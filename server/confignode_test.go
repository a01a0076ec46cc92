package server

import (
	"testing"

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
