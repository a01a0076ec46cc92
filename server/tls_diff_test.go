package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// startTLSServers starts ZooKeeper 3.8 and zkraft configured alike by f.serverOptions
// (with extra keys, then changed by mods), each with a secure client port; it returns each server and its
// secure address, keyed "zookeeper" and "zkraft".
// compareSecure runs steps against ZooKeeper's secure port, then zkraft's, and compares
// what they give line by line. A ZooKeeper run that sane (if not nil) refuses stops the
// test: the reference went wrong, not zkraft.
func compareSecure(t *testing.T, servers map[string][2]string, steps func(secure string) []string, sane func(want []string) bool) {
	t.Helper()
	want := steps(servers["zookeeper"][1])
	if sane != nil && !sane(want) {
		t.Fatalf("reference run:\n%s", strings.Join(want, "\n"))
	}
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
	compareLines(t, want, steps(servers["zkraft"][1]))
}

func startTLSServers(t *testing.T, f *tlsFiles, extra map[string]string, mods ...func(*ztest.Options)) map[string][2]string {
	t.Helper()
	requireClient(t, "ZooKeeper 3.8, java and kazoo", ztest.Available() == nil)
	secure := map[string]int{}
	servers := startBoth(t, func(name string) ztest.Options {
		port, err := ztest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		secure[name] = port
		opts := f.serverOptions(t, port, extra)
		for _, mod := range mods {
			mod(&opts)
		}
		return opts
	})
	out := map[string][2]string{}
	for name, s := range servers {
		out[name] = [2]string{s.Addr, fmt.Sprintf("127.0.0.1:%d", secure[name])}
	}
	return out
}

// startBoth starts ZooKeeper and zkraft side by side, each with the options opts gives
// for its name ("zookeeper", "zkraft"), and stops them when the test ends; a server
// that does not start fails the test.
func startBoth(t *testing.T, opts func(name string) ztest.Options) map[string]*ztest.Server {
	t.Helper()
	type started struct {
		name string
		s    *ztest.Server
		err  error
	}
	starts := map[string]func(ztest.Options) (*ztest.Server, error){"zookeeper": ztest.StartZooKeeper, "zkraft": ztest.StartZkraft}
	results := make(chan started, len(starts))
	for name, start := range starts {
		o := opts(name)
		go func() {
			s, err := start(o)
			results <- started{name, s, err}
		}()
	}
	out := map[string]*ztest.Server{}
	var failed []string
	for range starts {
		r := <-results
		if r.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.name, r.err))
			continue
		}
		t.Cleanup(func() { r.s.Stop() })
		out[r.name] = r.s
	}
	if len(failed) > 0 {
		t.Fatal(strings.Join(failed, "\n"))
	}
	return out
}

// zkOutcome prints an error as ZooKeeper's code name, or OK.
func zkOutcome(err error) string {
	if err == nil {
		return "OK"
	}
	for code, e := range map[string]error{"NoAuth": zk.ErrNoAuth, "InvalidACL": zk.ErrInvalidACL,
		"AuthFailed": zk.ErrAuthFailed, "NoNode": zk.ErrNoNode, "ConnectionClosed": zk.ErrConnectionClosed} {
		if errors.Is(err, e) {
			return code
		}
	}
	return err.Error()
}

// x509Steps runs ACL steps with clients that show certificates (over TLS at secure)
// and one that does not (plaintext at plain), and prints each outcome.
func x509Steps(t *testing.T, f *tlsFiles, plain, secure string) []string {
	var lines []string
	step := func(what string, v any) { lines = append(lines, fmt.Sprintf("%s: %v", what, v)) }
	c1 := f.zkOverTLS(t, secure, "client1")
	c2 := f.zkOverTLS(t, secure, "client2")
	admin := f.zkOverTLS(t, secure, "admin")
	tricky := f.zkOverTLS(t, secure, "tricky")
	anon := zkConnect(t, plain, nil)

	only := func(id string, perms int32) []zk.ACL { return []zk.ACL{{Perms: perms, Scheme: "x509", ID: id}} }
	_, err := c1.Create("/x509", []byte("secret"), 0, only("CN=client1,O=zkraft", zk.PermAll))
	step("client1 creates /x509 for x509:CN=client1,O=zkraft", zkOutcome(err))
	type named struct {
		name string
		c    *zk.Conn
	}
	for _, n := range []named{{"client1", c1}, {"client2", c2}, {"admin", admin}, {"plaintext", anon}} {
		name, c := n.name, n.c
		_, _, err := c.Get("/x509")
		step(name+" reads /x509", zkOutcome(err))
	}
	_, err = admin.Set("/x509", []byte("by admin"), -1)
	step("admin (super user) writes /x509", zkOutcome(err))
	_, err = c2.Set("/x509", []byte("by client2"), -1)
	step("client2 writes /x509", zkOutcome(err))

	// "auth" expands to the caller's x509 identity, so the stored ACL shows the id the
	// server derived from the certificate, byte for byte.
	for _, n := range []named{{"client1", c1}, {"tricky", tricky}, {"admin", admin}, {"plaintext", anon}} {
		name, c := n.name, n.c
		path := "/auth-" + strings.ReplaceAll(name, " ", "-")
		_, err := c.Create(path, nil, 0, zk.AuthACL(zk.PermAll))
		step(name+" creates "+path+" with auth ACL", zkOutcome(err))
		if err == nil {
			acl, _, err := c.GetACL(path)
			step(name+" getACL "+path, fmt.Sprint(acl, zkOutcome(err)))
		}
	}
	for _, id := range []string{"garbage", "CN=", "CN=a,,O=b", "FOO=bar", "2.5.4.3=x", "OID.2.5.4.3=x",
		`CN="quoted, value"`, "CN=#0403616263", "CN=#abc", `CN=a\`, "cn=lower, o=spaced", "CN=a;O=b", "CN=a+OU=b", ""} {
		_, err := c1.Create("/invalid", nil, 0, only(id, zk.PermAll))
		step(fmt.Sprintf("create with x509 id %q", id), zkOutcome(err))
		if err == nil {
			c1.Delete("/invalid", -1)
		}
	}
	// addauth x509: a client with a certificate keeps its identity; one without fails.
	step("client1 addauth x509", zkOutcome(c1.AddAuth("x509", []byte("anything"))))
	_, _, err = c1.Get("/x509")
	step("client1 reads /x509 after addauth", zkOutcome(err))
	return lines
}

// TestX509ACLMatchesZooKeeper: x509 identities and ACLs give the same outcomes, and
// the same stored ids, on ZooKeeper 3.8 and zkraft configured alike.
func TestX509ACLMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	want := x509Steps(t, f, servers["zookeeper"][0], servers["zookeeper"][1])
	got := x509Steps(t, f, servers["zkraft"][0], servers["zkraft"][1])
	if len(want) < 20 {
		t.Fatalf("reference run printed %d steps", len(want))
	}
	compareLines(t, want, got)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
}

// TestAddAuthX509WithoutCertificate: addauth x509 on a connection without a
// certificate fails and closes it, as ZooKeeper's X509AuthenticationProvider answers.
func TestAddAuthX509WithoutCertificate(t *testing.T) {
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	for name, addrs := range servers {
		c := zkConnect(t, addrs[0], nil)
		err := c.AddAuth("x509", []byte("CN=client1,O=zkraft"))
		if zkOutcome(err) != "AuthFailed" {
			t.Errorf("%s: addauth x509 without a certificate: %v", name, err)
		}
	}
}

// TestClientAuthModesMatchZooKeeper: with ssl.clientAuth=want a TLS client without a
// certificate is served (with no x509 id) and one with a certificate gets its id; with
// none, no certificate is asked for, so nobody has an x509 id. Same on both servers.
func TestClientAuthModesMatchZooKeeper(t *testing.T) {
	t.Parallel()
	f := newTLSFiles(t)
	for _, mode := range []string{"want", "none"} {
		t.Run(mode, func(t *testing.T) {
			servers := startTLSServers(t, f, map[string]string{"ssl.clientAuth": mode})
			steps := func(secure string) []string {
				var lines []string
				for _, client := range []string{"", "client1"} {
					c := f.zkOverTLS(t, secure, client)
					path := "/auth-" + mode + "-" + client
					_, err := c.Create(path, nil, 0, zk.AuthACL(zk.PermAll))
					acl, _, _ := c.GetACL(path)
					lines = append(lines, fmt.Sprintf("client %q creates with auth ACL: %s %v", client, zkOutcome(err), acl))
				}
				return lines
			}
			compareSecure(t, servers, steps, nil)
		})
	}
}
