package server

import (
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestPortUnificationMatchesZooKeeper: with client.portUnification one port serves a
// plaintext client and a TLS client (with its x509 identity) at once, on ZooKeeper and
// zkraft alike; four-letter words still answer there in plaintext.
func TestPortUnificationMatchesZooKeeper(t *testing.T) {
	f := newTLSFiles(t)
	requireClient(t, "ZooKeeper 3.8, java and kazoo", ztest.Available() == nil)
	steps := func(start func(ztest.Options) (*ztest.Server, error)) []string {
		// ZooKeeper 3.8 registers the x509 provider for port unification only after its
		// standalone main has loaded the providers, so it needs authProvider.x509 here
		// (docs/compatibility.md); zkraft registers it either way.
		s, err := start(f.serverOptions(t, 0, map[string]string{"client.portUnification": "true",
			"authProvider.x509": "org.apache.zookeeper.server.auth.X509AuthenticationProvider"}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		defer func() {
			if t.Failed() {
				t.Log(s.Log())
			}
		}()
		var lines []string
		step := func(what string, v any) { lines = append(lines, fmt.Sprintf("%s: %v", what, v)) }
		secure := f.zkOverTLS(t, s.Addr, "client1")
		plain := zkConnect(t, s.Addr, nil)
		_, err = secure.Create("/unified", []byte("x"), 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=client1,O=zkraft"}})
		step("TLS client creates an x509 node", zkOutcome(err))
		_, _, err = secure.Get("/unified")
		step("TLS client reads it", zkOutcome(err))
		_, _, err = plain.Get("/unified")
		step("plaintext client reads it", zkOutcome(err))
		_, err = plain.Create("/plain", []byte("p"), 0, zk.WorldACL(zk.PermAll))
		step("plaintext client creates /plain", zkOutcome(err))
		data, _, err := secure.Get("/plain")
		step("TLS client reads /plain", fmt.Sprint(string(data), " ", zkOutcome(err)))
		out, err := ztest.FourLetter(s.Addr, "conf")
		step("conf answers", err == nil && strings.Contains(out, "secureClientPort=-1"))
		return lines
	}
	want := steps(ztest.StartZooKeeper)
	got := steps(ztest.StartZkraft)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	compareLines(t, want, got)
}

// TestConfAndConsOfTheSecurePort: conf's secureClientPort line is the secure port, as
// ZooKeeper's dumpConf prints it, and cons lists the connections of the port it was
// asked on: with one TLS client connected, plaintext cons lists itself only, cons over
// TLS lists the TLS client and itself.
func TestConfAndConsOfTheSecurePort(t *testing.T) {
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	listed := func(out string) int {
		return strings.Count(out, "\n /127.0.0.1:") + b2i(strings.HasPrefix(out, " /127.0.0.1:"))
	}
	counts := map[string]string{}
	for name, addrs := range servers {
		out, err := ztest.FourLetter(addrs[0], "conf")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ := strings.Cut(addrs[1], "127.0.0.1:")
		if !strings.Contains(out, "\nsecureClientPort="+port+"\n") {
			t.Errorf("%s: conf:\n%s", name, out)
		}
		c := f.zkOverTLS(t, addrs[1], "client1")
		if _, _, err := c.Exists("/"); err != nil {
			t.Fatal(err)
		}
		plain, err := ztest.FourLetter(addrs[0], "cons")
		if err != nil {
			t.Fatal(err)
		}
		tc, err := tls.Dial("tcp", addrs[1], f.clientTLS("client2"))
		if err != nil {
			t.Fatal(err)
		}
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		tc.Write([]byte("cons"))
		secure, _ := io.ReadAll(tc)
		tc.Close()
		counts[name] = fmt.Sprintf("plaintext cons lists %d, TLS cons lists %d", listed(plain), listed(string(secure)))
		t.Logf("%s: %s\nplaintext:\n%s\nTLS:\n%s", name, counts[name], plain, secure)
	}
	if counts["zookeeper"] != "plaintext cons lists 1, TLS cons lists 2" || counts["zkraft"] != counts["zookeeper"] {
		t.Errorf("zookeeper: %s; zkraft: %s", counts["zookeeper"], counts["zkraft"])
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
