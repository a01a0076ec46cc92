package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// Real clients against a 3-process zkraft cluster whose leader is killed with SIGKILL.

func startZkraftCluster(t *testing.T) *ztest.Cluster {
	t.Helper()
	c, err := ztest.StartZkraftCluster(3, ztest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// leaderPid returns the leader's index and pid, for the client program to kill.
func leaderPid(t *testing.T, c *ztest.Cluster) (int, string) {
	t.Helper()
	l := c.Leader()
	if l < 0 {
		t.Fatal("no leader")
	}
	return l, fmt.Sprint(c.Members[l].Cmd.Process.Pid)
}

// restartAndCompare brings the killed member back and checks that every member holds
// the same children under dir (read after a sync on each member).
func restartAndCompare(t *testing.T, c *ztest.Cluster, killed int, dir string, want int) {
	t.Helper()
	if err := c.Members[killed].Restart(false); err != nil {
		t.Fatal(err)
	}
	if err := c.AwaitServing(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	var first []string
	for i, m := range c.Members {
		conn, _, err := zk.Connect([]string{m.Addr}, 10*time.Second, zk.WithLogInfo(false))
		if err != nil {
			t.Fatal(err)
		}
		var kids []string
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err = conn.Sync(dir); err == nil {
				if kids, _, err = conn.Children(dir); err == nil {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("member %d: %v", i+1, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		conn.Close()
		if len(kids) != want {
			t.Fatalf("member %d has %d children under %s, want %d", i+1, len(kids), dir, want)
		}
		if first == nil {
			slices.Sort(kids)
			first = kids
		} else if slices.Sort(kids); !slices.Equal(kids, first) {
			t.Fatalf("member %d differs: %v vs %v", i+1, kids, first)
		}
	}
}

func TestKazooThroughLeaderKill(t *testing.T) {
	requireClient(t, "kazoo", exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	c := startZkraftCluster(t)
	l, pid := leaderPid(t, c)
	out := run(t, 2*time.Minute, systemPy, "testdata/kazoo_failover.py", c.ConnectString(), pid)
	t.Log(out)
	if !strings.Contains(out, "all passed") {
		t.Fatalf("kazoo:\n%s", out)
	}
	restartAndCompare(t, c, l, "/acked", 20)
}

func TestCuratorMutexThroughLeaderKill(t *testing.T) {
	_, err := exec.LookPath("javac")
	_, jerr := os.Stat(filepath.Join(javaJarDir, "curator-recipes.jar"))
	requireClient(t, "javac and Curator", err == nil && jerr == nil)
	c := startZkraftCluster(t)
	classes := t.TempDir()
	cp := javaJarDir + "/*"
	run(t, 3*time.Minute, "javac", "-proc:none", "-nowarn", "-cp", cp, "-d", classes, "testdata/CuratorFailover.java")
	l, pid := leaderPid(t, c)
	out := run(t, 2*time.Minute, "java", "-cp", classes+":"+cp, "CuratorFailover", c.ConnectString(), pid)
	t.Log(out)
	if !strings.Contains(out, "all passed") {
		t.Fatalf("curator:\n%s", out)
	}
	restartAndCompare(t, c, l, "/locks/failover", 0)
}
