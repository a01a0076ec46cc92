package server

import (
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
	"github.com/zkraft/zkraft/server/ztest"
)

// memberKeyStore writes a PEM key store as ZooKeeper reads it (the member's key and
// certificate in one file), issued by ca for a member at ips, and returns its path.
func memberKeyStore(t *testing.T, ca *tlstest.CA, dir, name string, ips ...string) string {
	t.Helper()
	o := tlstest.Options{Subject: pkix.Name{CommonName: name}}
	for _, ip := range ips {
		o.IPs = append(o.IPs, net.ParseIP(ip))
	}
	return ca.Issue(t, o).WritePEM(t, filepath.Join(dir, name+"-keystore.pem"))
}

// trustPEM writes ca's certificate as a PEM trust store and returns its path.
func trustPEM(t *testing.T, ca *tlstest.CA, dir string) string {
	return tlstest.WriteFile(t, filepath.Join(dir, ca.Cert.Subject.CommonName+"-truststore.pem"), ca.CertPEM())
}

// sslQuorumConfig is the zoo.cfg of a 3-member cluster whose members talk mutual TLS,
// with PEM stores made here, and the members' peer and election addresses.
func sslQuorumConfig(t *testing.T) (map[string]string, []string) {
	t.Helper()
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "ca")
	cfg := map[string]string{
		"sslQuorum":                       "true",
		"ssl.quorum.keyStore.location":    memberKeyStore(t, ca, dir, "member", "127.0.0.1"),
		"ssl.quorum.keyStore.type":        "PEM",
		"ssl.quorum.trustStore.location":  trustPEM(t, ca, dir),
		"ssl.quorum.trustStore.type":      "PEM",
		"ssl.quorum.hostnameVerification": "true",
	}
	var memberAddrs []string
	for i := 1; i <= 3; i++ {
		var ports [2]int
		for j := range ports {
			p, err := ztest.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			ports[j] = p
		}
		cfg[fmt.Sprintf("server.%d", i)] = fmt.Sprintf("127.0.0.1:%d:%d", ports[0], ports[1])
		memberAddrs = append(memberAddrs, fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1]))
	}
	return cfg, memberAddrs
}

// kazooEveryMember has kazoo write a node through each member and read all of them
// back through each.
const kazooEveryMember = `
import sys
from kazoo.client import KazooClient
addrs = sys.argv[1].split(",")
for i, a in enumerate(addrs):
    c = KazooClient(hosts=a, timeout=10)
    c.start(timeout=20)
    c.create("/tls/m%d" % i, b"via %s" % a.encode(), makepath=True)
    c.stop(); c.close()
for a in addrs:
    c = KazooClient(hosts=a, timeout=10)
    c.start(timeout=20)
    c.sync("/tls")
    kids = sorted(c.get_children("/tls"))
    assert kids == ["m%d" % i for i in range(len(addrs))], (a, kids)
    for i, b in enumerate(addrs):
        assert c.get("/tls/m%d" % i)[0] == b"via %s" % b.encode()
    c.stop(); c.close()
print("all passed")
`

// A 3-process zkraft cluster with sslQuorum and PEM stores forms, serves kazoo on every
// member, refuses plaintext on every member port, and keeps serving after its leader is
// killed.
func TestSSLQuorumClusterProcesses(t *testing.T) {
	requireClient(t, "kazoo", exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	cfg, memberAddrs := sslQuorumConfig(t)
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf, ExtraConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	var addrs []string
	for _, m := range c.Members {
		addrs = append(addrs, m.Addr)
	}
	out := run(t, time.Minute, systemPy, "-c", kazooEveryMember, strings.Join(addrs, ","))
	if !strings.Contains(out, "all passed") {
		t.Fatalf("kazoo:\n%s", out)
	}
	for _, a := range memberAddrs {
		if err := refusesPlaintext(a); err != nil {
			t.Error(err)
		}
	}
	for _, m := range c.Members {
		if !strings.Contains(m.Log(), "refused a member stream") {
			t.Errorf("%s: no refusal of the plaintext streams logged", m.Addr)
		}
	}

	l := c.Leader()
	if l < 0 {
		t.Fatal("no leader")
	}
	if err := c.Members[l].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitServing(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	var survivors []string
	for i, m := range c.Members {
		if i != l {
			survivors = append(survivors, m.Addr)
		}
	}
	conn, _, err := zk.Connect(survivors[:1], 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := conn.Create("/tls/after-kill", []byte("x"), 0, zk.WorldACL(zk.PermAll))
		if err == nil || errors.Is(err, zk.ErrNodeExists) { // NodeExists: an earlier try was applied
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("write after the leader's kill: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	other, _, err := zk.Connect(survivors[1:], 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Sync("/tls"); err != nil {
		t.Fatal(err)
	}
	if d, _, err := other.Get("/tls/after-kill"); err != nil || string(d) != "x" {
		t.Fatalf("the other survivor: %q, %v", d, err)
	}
}

// refusesPlaintext dials addr in plaintext, sends what a plaintext member would, and
// expects the stream closed with no answer but a TLS alert.
func refusesPlaintext(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte{0, 0, 0, 1, 'Q'})
	b := make([]byte, 256)
	n := 0
	for err == nil && n < len(b) {
		var m int
		m, err = c.Read(b[n:])
		n += m
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("%s kept a plaintext stream open", addr)
	case n > 0 && b[0] != 0x15: // a TLS alert record
		return fmt.Errorf("%s answered plaintext with %q", addr, b[:n])
	}
	return nil
}

// The same zoo.cfg and PEM stores make a ZooKeeper 3.8 ensemble whose members talk TLS
// (the oracle for the keys and the store layout), refusing plaintext on its member ports.
func TestSSLQuorumZooKeeperTakesSameConfig(t *testing.T) {
	t.Parallel()
	requireClient(t, "kazoo", exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	cfg, memberAddrs := sslQuorumConfig(t)
	c, err := ztest.StartZooKeeperEnsemble(3, ztest.Options{Logf: t.Logf, ExtraConfig: cfg})
	if err != nil {
		requireClient(t, "ZooKeeper 3.8", !strings.Contains(err.Error(), "not installed"))
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	var addrs []string
	for _, m := range c.Members {
		addrs = append(addrs, m.Addr)
	}
	out := run(t, time.Minute, systemPy, "-c", kazooEveryMember, strings.Join(addrs, ","))
	if !strings.Contains(out, "all passed") {
		t.Fatalf("kazoo:\n%s", out)
	}
	// Only ZooKeeper's leader listens on its peer port; a refused dial is no answer.
	for _, a := range memberAddrs {
		if err := refusesPlaintext(a); err != nil && !errors.Is(err, syscall.ECONNREFUSED) {
			t.Error(err)
		}
	}
}

// A running plaintext cluster moves to TLS between members without losing its quorum,
// by ZooKeeper's procedure: a rolling restart with portUnification on, one with
// sslQuorum on, one with portUnification off. It serves after every restart, and at the
// end refuses plaintext on every member port.
func TestSSLQuorumRollingUpgradeWithPortUnification(t *testing.T) {
	cfg, memberAddrs := sslQuorumConfig(t)
	cfg["sslQuorum"] = "false"
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf, ExtraConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	n := 0
	for _, step := range []struct{ key, value string }{{"portUnification", "true"}, {"sslQuorum", "true"}, {"portUnification", "false"}} {
		for i, m := range c.Members {
			if err := m.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := m.SetConfig(step.key, step.value); err != nil {
				t.Fatal(err)
			}
			if err := m.Restart(false); err != nil {
				t.Fatal(err)
			}
			if err := c.AwaitServing(30 * time.Second); err != nil {
				t.Fatalf("%s=%s on member %d: %v", step.key, step.value, i+1, err)
			}
			n++
			writeAndReadEverywhere(t, c, fmt.Sprintf("/upgrade-%d", n))
		}
	}
	for _, a := range memberAddrs {
		if err := refusesPlaintext(a); err != nil {
			t.Error(err)
		}
	}
}

// writeAndReadEverywhere creates path through one member and reads it through each.
func writeAndReadEverywhere(t *testing.T, c *ztest.Cluster, path string) {
	t.Helper()
	for i, m := range c.Members {
		conn, _, err := zk.Connect([]string{m.Addr}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if i == 0 {
				_, err = conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
				if errors.Is(err, zk.ErrNodeExists) { // an earlier try was applied
					err = nil
				}
			} else if _, err = conn.Sync(path); err == nil {
				_, _, err = conn.Get(path)
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s through member %d: %v", path, i+1, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		conn.Close()
	}
}

// A member restarted with a certificate from a CA the others do not trust cannot rejoin:
// it serves no client while the other two go on serving writes; back on its trusted
// certificate it rejoins and has them.
func TestSSLQuorumUntrustedMemberProcess(t *testing.T) {
	cfg, _ := sslQuorumConfig(t)
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf, ExtraConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	rogueStore := memberKeyStore(t, tlstest.NewCA(t, "rogue"), t.TempDir(), "rogue", "127.0.0.1")
	out := (c.Leader() + 1) % 3
	m := c.Members[out]
	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.SetConfig("ssl.quorum.keyStore.location", rogueStore); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(false); err != nil {
		t.Fatal(err)
	}
	var others []*ztest.Server
	for i, o := range c.Members {
		if i != out {
			others = append(others, o)
		}
	}
	conn, _, err := zk.Connect([]string{others[0].Addr, others[1].Addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 5; i++ {
		path := fmt.Sprintf("/while-out-%d", i)
		for {
			_, err := conn.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
			if err == nil || errors.Is(err, zk.ErrNodeExists) { // NodeExists: an earlier try was applied
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s with a member out: %v", path, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// Give it time to have joined, were it able to.
	time.Sleep(3 * time.Second)
	if srvr, _ := ztest.FourLetter(m.Addr, "srvr"); strings.Contains(srvr, "Mode: ") {
		t.Fatalf("the member with an untrusted certificate serves:\n%s", srvr)
	}
	// It stands for election once its heartbeat timeout (a tick or two) passes without
	// a leader it can hear, and dials the others for votes.
	for refusedAt := time.Now().Add(15 * time.Second); !strings.Contains(others[0].Log()+others[1].Log(), "refused a member stream"); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(refusedAt) {
			t.Error("the trusted members logged no refused stream")
			break
		}
	}

	if err := m.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := m.SetConfig("ssl.quorum.keyStore.location", cfg["ssl.quorum.keyStore.location"]); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(false); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitServing(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	back, _, err := zk.Connect([]string{m.Addr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := back.Sync("/"); err != nil {
		t.Fatal(err)
	}
	if kids, _, err := back.Children("/"); err != nil || len(kids) < 6 {
		t.Fatalf("the member back on its certificate has %v (%v)", kids, err)
	}
}
