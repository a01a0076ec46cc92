package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// The quota metrics in Prometheus' format, labelled by namespace as ZooKeeper's
// Prometheus provider labels a gauge or counter set ("key"); mntr's names are checked
// against ZooKeeper's in TestQuotaZkCliMatchesZooKeeper.
func TestQuotaMetricsPrometheus(t *testing.T) {
	port := mustFreePort(t)
	s := startServer(t, func(c *Config) {
		c.EnforceQuota = true
		c.MetricsHost, c.MetricsPort = "127.0.0.1", port
	})
	c := dial(t, s.Addr().String())
	c.connect(0, nil)
	for _, n := range []struct{ path, data string }{
		{"/ns", ""}, {"/ns/a", "abc"}, {"/zookeeper/quota/ns", ""}, {"/zookeeper/quota/ns/a", ""},
		{"/zookeeper/quota/ns/a/zookeeper_limits", "count=5,bytes=-1=;byteHardLimit=4;countHardLimit=-1"},
		{"/zookeeper/quota/ns/a/zookeeper_stats", "count=0,bytes=0"},
	} {
		if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: n.path, Data: []byte(n.data), Acl: openACL}, nil); h.Err != 0 {
			t.Fatalf("create %s: %d", n.path, h.Err)
		}
	}
	if h := c.call(jute.OpCreate, &jute.CreateRequest{Path: "/ns/a/b", Data: []byte("xy"), Acl: openACL}, nil); h.Err != int32(jute.ErrQuotaExceeded) {
		t.Fatalf("create over the hard byte quota: %d", h.Err)
	}
	code, body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	for _, want := range []string{
		"# TYPE quota_count_limit_per_namespace gauge\n",
		`quota_count_limit_per_namespace{key="ns"} 5` + "\n",
		`quota_bytes_limit_per_namespace{key="ns"} 4` + "\n",
		`quota_count_usage_per_namespace{key="ns"} 1` + "\n",
		`quota_bytes_usage_per_namespace{key="ns"} 3` + "\n",
		"# TYPE quota_exceeded_error_per_namespace counter\n",
		`quota_exceeded_error_per_namespace{key="ns"} 1` + "\n",
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Fatalf("metrics lack %q:\n%s", want, body)
		}
	}
	mntr := askFourLetter(t, s.Addr().String(), "mntr")
	if !strings.Contains(mntr, "zk_ns_quota_exceeded_error_per_namespace\t1\n") {
		t.Fatalf("mntr:\n%s", mntr)
	}
}
