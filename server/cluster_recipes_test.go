package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCuratorRecipesThroughMemberKills runs testdata/CuratorRecipesFailover.java against a
// 3-process cluster: recipes of a client on a follower wait on watches while that follower
// is killed (and then restarted) and, in a second round, while the leader is killed. The
// program asks for each kill and restart on its stdout and reads the answer on its stdin.
func TestCuratorRecipesThroughMemberKills(t *testing.T) {
	_, err := exec.LookPath("javac")
	_, jerr := os.Stat(filepath.Join(javaJarDir, "curator-recipes.jar"))
	requireClient(t, "javac and Curator", err == nil && jerr == nil)
	classes := t.TempDir()
	cp := javaJarDir + "/*"
	run(t, 3*time.Minute, "javac", "-proc:none", "-nowarn", "-cp", cp, "-d", classes, "testdata/CuratorRecipesFailover.java")
	c := startZkraftCluster(t)
	l := c.AwaitLeader(10 * time.Second)
	if l < 0 {
		t.Fatal("no leader")
	}
	member := func(addr string) int {
		for i, m := range c.Members {
			if m.Addr == addr {
				return i
			}
		}
		t.Fatalf("no member at %q", addr)
		return -1
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", classes+":"+cp, "CuratorRecipesFailover", c.ConnectString(), c.Members[l].Addr)
	stdin, sc, stderr := startPiped(t, cmd)
	var out strings.Builder
	leaderKilled := -1
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(&out, line)
		what, ok := strings.CutPrefix(line, "@")
		if !ok {
			continue
		}
		var answer string
		switch {
		case what == "kill leader":
			i := c.AwaitLeader(10 * time.Second)
			if i < 0 {
				t.Fatal("no leader to kill")
			}
			c.Members[i].Kill()
			leaderKilled, answer = i, c.Members[i].Addr
		case strings.HasPrefix(what, "kill "):
			i := member(strings.TrimPrefix(what, "kill "))
			c.Members[i].Kill()
			answer = c.Members[i].Addr
		case strings.HasPrefix(what, "restart "):
			i := member(strings.TrimPrefix(what, "restart "))
			if err := c.Members[i].Restart(false); err != nil {
				t.Fatal(err)
			}
			if err := c.AwaitServing(60 * time.Second); err != nil {
				t.Fatal(err)
			}
			answer = c.Members[i].Addr
		default:
			t.Fatalf("unknown request %q", line)
		}
		t.Logf("%s: done", what)
		fmt.Fprintln(stdin, answer)
	}
	err = cmd.Wait()
	t.Log(out.String())
	if err != nil || !strings.Contains(out.String(), "all passed") {
		t.Fatalf("curator: %v\n%s\n%s", err, out.String(), stderr.String())
	}
	if leaderKilled < 0 {
		t.Fatal("the leader was never killed")
	}
	restartAndCompare(t, c, leaderKilled, "/recipes/acked", 20)
}
