package server

import (
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/server/ztest"
)

// ensembleSteps gives the ensemble scheme a name the server takes, one it does not, an
// empty one, and tries an ACL that names the scheme: a line per outcome, then mntr's
// counts.
func ensembleSteps(t *testing.T, addr string) []string {
	var lines []string
	for _, name := range []string{"alpha", "gamma", ""} {
		c := trySession(t, addr, 0, nil)
		if c == nil {
			t.Fatal("no session")
		}
		h, err := c.exchange(jute.OpAuth, &jute.AuthPacket{Scheme: "ensemble", Auth: []byte(name)}, nil)
		lines = append(lines, fmt.Sprintf("addauth ensemble %q: %s", name, ended(h, err)))
		if err == nil {
			acl := []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "ensemble", Id: "alpha"}}}
			h, err := c.exchange(jute.OpCreate, &jute.CreateRequest{Path: "/e-" + name, Acl: acl}, nil)
			lines = append(lines, "create with an ensemble ACL: "+ended(h, err))
			h, err = c.exchange(jute.OpCreate, &jute.CreateRequest{Path: "/e-" + name, Acl: []jute.ACL{{Perms: jute.PermAll, Id: jute.Id{Scheme: "auth"}}}}, nil)
			lines = append(lines, "create with an auth ACL: "+ended(h, err))
		}
	}
	mntr := askFourLetter(t, addr, "mntr")
	for _, k := range []string{"ensemble_auth_success", "ensemble_auth_fail", "ensemble_auth_skip"} {
		lines = append(lines, fmt.Sprintf("zk_%s %s", k, mntrLine(mntr, k)))
	}
	return lines
}

// EnsembleAuthenticationProvider: a client that names another ensemble is disconnected
// (so it tries another server); its own ensemble's name and an empty one pass, and give
// no identity an ACL could name, as in ZooKeeper 3.8.
func TestEnsembleAuthMatchesZooKeeper(t *testing.T) {
	bothTranscripts(t, ztest.Options{Logf: t.Logf, ExtraConfig: map[string]string{"4lw.commands.whitelist": "*",
		"authProvider.1": "org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider", "ensembleAuthName": "alpha, beta"}}, ensembleSteps)
}
