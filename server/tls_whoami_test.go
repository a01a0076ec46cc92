package server

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestWhoAmIOverTLSMatchesZooKeeper: zkCli's whoami over TLS lists the same identities
// on both servers, the x509 super user's "super" one with an empty user (ZooKeeper
// names users through the scheme's provider, and no provider serves "super"). The
// order is not compared: ZooKeeper's is its hash set's (docs/compatibility.md).
func TestWhoAmIOverTLSMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	_, err := os.Stat(zkCli)
	requireClient(t, "zkCli.sh", err == nil)
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	script := "whoami\naddauth digest u:p\nwhoami\nquit\n"
	identities := func(server, client string) []string {
		var ids []string
		for _, l := range zkCliOverTLS(t, f, servers[server][1], client, script) {
			if scheme, _, ok := strings.Cut(l, ": "); ok && !strings.Contains(scheme, " ") {
				ids = append(ids, l)
			}
		}
		slices.Sort(ids)
		return ids
	}
	for _, client := range []string{"admin", "client1"} {
		want := identities("zookeeper", client)
		if len(want) < 5 || (client == "admin" && !slices.Contains(want, "super: ")) {
			t.Fatalf("%s: reference whoami:\n%s", client, strings.Join(want, "\n"))
		}
		t.Logf("zookeeper, %s:\n%s", client, strings.Join(want, "\n"))
		compareLines(t, want, identities("zkraft", client))
	}
}
