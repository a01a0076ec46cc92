package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// zkCliOverTLS runs a zkCli.sh script over TLS (Netty client socket) with the named
// client's JKS key store, and returns the normalized transcript. zkCli splits ACLs at
// commas, so its x509 ids here have one RDN.
func zkCliOverTLS(t *testing.T, f *tlsFiles, addr, client, script string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCli, "-server", addr)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+strings.Join([]string{
		// Debian's zkCli.sh classpath (zookeeper.jar's manifest) lacks the Netty codec
		// and resolver jars that Netty's TLS client needs; a later -cp wins.
		"-cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar",
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.ssl.keyStore.location=" + f.jks(t, client),
		"-Dzookeeper.ssl.keyStore.password=" + f.password,
		"-Dzookeeper.ssl.trustStore.location=" + f.trust,
		"-Dzookeeper.ssl.trustStore.password=" + f.password,
	}, " "))
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("zkCli: %v\n%s", err, out)
	}
	// zkCli exits with its last command's status.
	return append(normalizeCli(string(out)), fmt.Sprintf("exit status %d", cmd.ProcessState.ExitCode()))
}

// TestZkCliOverTLSMatchesZooKeeper: zkCli.sh connects over TLS with a JKS key store to
// both servers and prints the same transcript, x509 ACLs included.
func TestZkCliOverTLSMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	_, err := os.Stat(zkCli)
	requireClient(t, "zkCli.sh", err == nil)
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	owner := strings.Join([]string{
		"create /tls-cli hello",
		"get /tls-cli",
		"create /tls-cli-x509 data x509:CN=solo:cdrwa",
		"get /tls-cli-x509",
		"getAcl /tls-cli-x509",
		"create /tls-cli-auth d auth::cdrwa",
		"getAcl /tls-cli-auth",
		"setAcl /tls-cli x509:nonsense:cdrwa",
		"addauth x509 ignored",
		"get /tls-cli-x509",
		"quit",
	}, "\n") + "\n"
	other := "get /tls-cli\nget /tls-cli-x509\nset /tls-cli-x509 x\nquit\n"
	transcript := func(name string) []string {
		secure := servers[name][1]
		return append(zkCliOverTLS(t, f, secure, "solo", owner), zkCliOverTLS(t, f, secure, "client2", other)...)
	}
	want, got := transcript("zookeeper"), transcript("zkraft")
	joined := strings.Join(want, "\n")
	if !strings.Contains(joined, "'x509,'CN=solo") || !strings.Contains(joined, "Insufficient permission") {
		t.Fatalf("reference transcript lacks the x509 ACL or the refusal:\n%s", joined)
	}
	compareLines(t, want, got)
	if t.Failed() {
		t.Logf("zookeeper transcript:\n%s", joined)
	}
}

// TestKazooOverTLSMatchesZooKeeper: kazoo with use_ssl, a CA and a PEM client
// certificate gets the same outcomes and ACLs from both servers.
func TestKazooOverTLSMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	requireClient(t, "kazoo", exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	f := newTLSFiles(t)
	servers := startTLSServers(t, f, nil)
	c := f.clients["client1"]
	steps := func(name string) []string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, systemPy, "testdata/kazoo_tls.py", servers[name][1], f.caPEM,
			c.certPEM, c.keyPEM, "/kazoo").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: kazoo_tls.py: %v\n%s", name, err, out)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	want, got := steps("zookeeper"), steps("zkraft")
	if len(want) != 10 || !strings.Contains(strings.Join(want, "\n"), `"x509", "CN=client1,O=zkraft"`) {
		t.Fatalf("reference run:\n%s", strings.Join(want, "\n"))
	}
	compareLines(t, want, got)
	t.Logf("zookeeper:\n%s", strings.Join(want, "\n"))
}

// TestCuratorAndJavaAPIOverTLSMatchesZooKeeper: Curator 5.4 and the Java API, each with
// its own ZKClientConfig and certificate, print the same outcomes and ACLs against both
// servers.
func TestCuratorAndJavaAPIOverTLSMatchesZooKeeper(t *testing.T) {
	t.Parallel()
	_, err := exec.LookPath("javac")
	_, jerr := os.Stat(javaJarDir + "/curator-recipes.jar")
	requireClient(t, "javac and Curator", err == nil && jerr == nil)
	f := newTLSFiles(t)
	classes := t.TempDir()
	cp := javaJarDir + "/*"
	run(t, 3*time.Minute, "javac", "-proc:none", "-nowarn", "-cp", cp, "-d", classes, "testdata/CuratorTLS.java")
	mine, other := f.jks(t, "client1"), f.jks(t, "client2")
	servers := startTLSServers(t, f, nil)
	steps := func(name string) []string {
		out := run(t, 2*time.Minute, "java", "-cp", classes+":"+cp, "CuratorTLS", servers[name][1], mine, other, f.trust, f.password)
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, ": ") && !strings.HasPrefix(l, "SLF4J") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	want, got := steps("zookeeper"), steps("zkraft")
	joined := strings.Join(want, "\n")
	if len(want) != 11 || !strings.Contains(joined, "java api reads x509 node: NOAUTH") {
		t.Fatalf("reference run:\n%s", joined)
	}
	compareLines(t, want, got)
	t.Logf("zookeeper:\n%s", joined)
}
