package server

import (
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// ZooKeeper 3.8 counts in auth_failed_count only TLS handshakes that fail
// (NettyServerCnxnFactory); an addauth it answers AuthFailed (an unknown scheme, digest
// with a null auth) counts nothing, on either connection factory. Both servers must
// report the same count after such addauths.
func TestFailedAddauthIsNotAnAuthFailedCount(t *testing.T) {
	requireClient(t, "ZooKeeper 3.8 and java", ztest.Available() == nil)
	failing := []*jute.AuthPacket{{Scheme: "nope", Auth: []byte("x")}, {Scheme: "digest"}, {Scheme: "world", Auth: []byte("anyone")}}
	count := func(name string, start func(ztest.Options) (*ztest.Server, error)) string {
		s, err := start(ztest.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		defer s.Stop()
		for _, a := range failing {
			c := dial(t, s.Addr)
			c.connect(0, nil)
			if _, err := c.nc.Write(jute.AppendFrame(nil, &jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, a)); err != nil {
				t.Fatal(err)
			}
			var h jute.ReplyHeader
			c.readFrame(&h)
			if jute.Code(h.Err) != jute.ErrAuthFailed {
				t.Fatalf("%s: addauth %s answered %d, want AuthFailed", name, a.Scheme, h.Err)
			}
			c.nc.Close()
		}
		mntr, err := ztest.FourLetter(s.Addr, "mntr")
		if err != nil {
			t.Fatalf("%s: mntr: %v", name, err)
		}
		for _, l := range strings.Split(mntr, "\n") {
			if strings.HasPrefix(l, "zk_auth_failed_count\t") {
				return strings.TrimPrefix(l, "zk_auth_failed_count\t")
			}
		}
		t.Fatalf("%s: no zk_auth_failed_count in mntr:\n%s", name, mntr)
		return ""
	}
	zk, us := count("zookeeper", ztest.StartZooKeeper), count("zkraft", ztest.StartZkraft)
	if zk != us {
		t.Fatalf("zk_auth_failed_count after %d failed addauths: zookeeper %s, zkraft %s", len(failing), zk, us)
	}
	t.Logf("zk_auth_failed_count %s on both", us)
}
