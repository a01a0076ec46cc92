package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The real clients from Debian's packages (see .ci/deps). Without them these tests
// skip, unless ZKRAFT_REQUIRE_CLIENTS=1 (set by make test) turns the skip into a failure.
const (
	zkCli      = "/usr/share/zookeeper/bin/zkCli.sh"
	systemPy   = "/usr/bin/python3"
	javaJarDir = "/usr/share/java"
)

func requireClient(t *testing.T, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("ZKRAFT_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s is not installed (run .ci/deps)", what)
	}
	t.Skipf("%s is not installed (run .ci/deps, or make test)", what)
}

func run(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestKazooClientAndRecipes(t *testing.T) {
	requireClient(t, "kazoo", exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	s := startServer(t, nil)
	out := run(t, 3*time.Minute, systemPy, "testdata/kazoo_smoke.py", s.Addr().String())
	if !strings.Contains(out, "all passed") {
		t.Fatalf("kazoo:\n%s", out)
	}
	t.Log(out)
}

func TestJavaClientAndCurator(t *testing.T) {
	_, err := exec.LookPath("javac")
	_, jerr := os.Stat(filepath.Join(javaJarDir, "curator-recipes.jar"))
	requireClient(t, "javac and Curator", err == nil && jerr == nil)
	s := startServer(t, nil)
	classes := t.TempDir()
	cp := javaJarDir + "/*"
	run(t, 3*time.Minute, "javac", "-proc:none", "-nowarn", "-cp", cp, "-d", classes, "testdata/Smoke.java")
	out := run(t, 3*time.Minute, "java", "-cp", classes+":"+cp, "Smoke", s.Addr().String())
	if !strings.Contains(out, "all passed") {
		t.Fatalf("java:\n%s", out)
	}
}

// zkCli.sh runs one command per start, so its commands go in as one script on stdin.
func TestZkCli(t *testing.T) {
	_, err := os.Stat(zkCli)
	requireClient(t, "zkCli.sh", err == nil)
	s := startServer(t, nil)
	script := strings.Join([]string{
		"create /c hello",
		"create -s /c/s- x",
		"create -e /c/e y",
		"create -c /cont",
		"create -t 60000 /ttl z",
		"get -s /c",
		"set /c world",
		"get /c",
		"ls -R /c",
		"stat /c",
		"getAcl /c",
		"delete -v 9 /c/e",
		"getEphemerals",
		"getAllChildrenNumber /c",
		"whoami",
		"deleteall /c",
		"ls /",
		"quit",
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCli, "-server", s.Addr().String())
	cmd.Stdin = strings.NewReader(script)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("zkCli: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Created /c/s-0000000000",
		"Created /cont",
		"Created /ttl",
		"cversion = 2", // get -s /c after two child creates: stored count 2, 2*2-2
		"numChildren = 2",
		"world",
		"/c/e\n/c/s-0000000000",
		"'world,'anyone\n: cdrwa",
		"version No is not valid : /c/e",
		"[/c/e]",
		"ip: 127.0.0.1",
		"[cont, ttl, zookeeper]",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("zkCli output lacks %q", want)
		}
	}
	t.Logf("zkCli output:\n%s", out)
}
