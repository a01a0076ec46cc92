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

	"github.com/zkraft/zkraft/server/ztest"
)

// The image and the 3-member compose cluster, on this machine's Docker engine: built with
// `make docker`, started with docker-compose, driven from the host with zkCli.sh and
// kazoo. The leader's container is stopped (failover), one member is cut from the network
// (the minority stops serving, the majority goes on) and put back (it converges). Skipped
// with a message when no Docker daemon answers; everything started is removed.
func TestDockerComposeCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds an image")
	}
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skip("no Docker daemon answers (docker info failed): the image and compose test is skipped")
	}
	if _, err := exec.LookPath("docker-compose"); err != nil {
		requireClient(t, "docker-compose", false)
	}
	_, zerr := os.Stat(zkCli)
	requireClient(t, "zkCli.sh and kazoo", zerr == nil && exec.Command(systemPy, "-c", "import kazoo").Run() == nil)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	image := fmt.Sprintf("zkraft-test:%d", time.Now().UnixNano())
	project := fmt.Sprintf("zkrafttest%d", os.Getpid())
	sh := func(timeout time.Duration, name string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	must := func(timeout time.Duration, name string, args ...string) string {
		t.Helper()
		out, err := sh(timeout, name, args...)
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return out
	}
	must(5*time.Minute, "make", "docker", "IMAGE="+image)
	t.Cleanup(func() { sh(time.Minute, "docker", "rmi", "-f", image) })

	var ports []int
	env := []string{"ZKRAFT_IMAGE=" + image}
	for i := 1; i <= 3; i++ {
		p, err := ztest.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, p)
		env = append(env, fmt.Sprintf("ZKRAFT_PORT%d=%d", i, p))
	}
	compose := func(timeout time.Duration, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "docker-compose", append([]string{"-p", project}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("docker-compose %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "docker-compose", "-p", project, "down", "-v", "--remove-orphans")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		cmd.Run()
	})
	compose(3*time.Minute, "up", "-d")
	container := func(i int) string { return fmt.Sprintf("%s_zoo%d_1", project, i+1) }
	health := func(i int) string {
		out, _ := sh(10*time.Second, "docker", "inspect", "--format", "{{.State.Health.Status}}", container(i))
		return strings.TrimSpace(out)
	}
	awaitHealthy := func(members ...int) {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(500 * time.Millisecond) {
			ok := true
			for _, i := range members {
				ok = ok && health(i) == "healthy"
			}
			if ok {
				return
			}
			if time.Now().After(deadline) {
				logs, _ := sh(10*time.Second, "docker", "logs", "--tail", "30", container(members[0]))
				t.Fatalf("members %v not healthy within 90s\n%s", members, logs)
			}
		}
	}
	awaitHealthy(0, 1, 2)
	connect := make([]string, 3)
	for i, p := range ports {
		connect[i] = fmt.Sprintf("127.0.0.1:%d", p)
	}
	all := strings.Join(connect, ",")

	// zkCli.sh and kazoo from the host.
	out := runZkCliScript(t, all, "create /docker hello\nget /docker\nquit\n", false)
	if !strings.Contains(strings.Join(out, "\n"), "Created /docker") || !strings.Contains(strings.Join(out, "\n"), "hello") {
		t.Fatalf("zkCli against the compose cluster:\n%s", strings.Join(out, "\n"))
	}
	kazoo := func(connect, script string) string {
		t.Helper()
		return run(t, time.Minute, systemPy, "-c", `
import sys
from kazoo.client import KazooClient
from kazoo.retry import KazooRetry
zk = KazooClient(hosts=sys.argv[1], timeout=10, connection_retry=KazooRetry(max_tries=-1, max_delay=0.5), command_retry=KazooRetry(max_tries=-1, max_delay=0.5, deadline=30))
zk.start(timeout=30)
`+script+`
zk.stop()
`, connect)
	}
	if got := kazoo(all, "zk.sync('/docker'); print(zk.get('/docker')[0].decode())"); strings.TrimSpace(got) != "hello" {
		t.Fatalf("kazoo read %q", got)
	}
	mode := func(i int) string {
		out, err := ztest.FourLetter(connect[i], "srvr")
		if err != nil {
			return ""
		}
		for _, l := range strings.Split(out, "\n") {
			if m, ok := strings.CutPrefix(l, "Mode: "); ok {
				return m
			}
		}
		return ""
	}
	leader := -1
	for i := range connect {
		if mode(i) == "leader" {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatal("no member reports Mode: leader")
	}

	// Failover: stop the leader's container (SIGTERM: it hands leadership over).
	must(time.Minute, "docker", "stop", container(leader))
	var rest []string
	var restIdx []int
	for i := range connect {
		if i != leader {
			rest, restIdx = append(rest, connect[i]), append(restIdx, i)
		}
	}
	kazoo(strings.Join(rest, ","), "zk.create('/after-failover', b'x')")
	if m0, m1 := mode(restIdx[0]), mode(restIdx[1]); !(m0 == "leader" && m1 == "follower" || m0 == "follower" && m1 == "leader") {
		t.Fatalf("after the leader stopped: modes %q and %q", m0, m1)
	}
	must(time.Minute, "docker", "start", container(leader))
	awaitHealthy(0, 1, 2)

	// A partition: one member leaves the network; it stops being ready, the others serve.
	cut := restIdx[0]
	for i := range connect {
		if mode(i) == "follower" {
			cut = i
		}
	}
	network := project + "_default"
	must(time.Minute, "docker", "network", "disconnect", network, container(cut))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if _, err := sh(10*time.Second, "docker", "exec", container(cut), "/zkraft", "healthcheck"); err != nil {
			break // not ready: no leader
		}
		if time.Now().After(deadline) {
			t.Fatal("the cut member stayed ready")
		}
	}
	var majority []string
	for i := range connect {
		if i != cut {
			majority = append(majority, connect[i])
		}
	}
	kazoo(strings.Join(majority, ","), "zk.create('/during-partition', b'y')")
	must(time.Minute, "docker", "network", "connect", network, container(cut))
	awaitHealthy(0, 1, 2)
	if got := kazoo(connect[cut], "zk.sync('/'); print(sorted(zk.get_children('/')))"); !strings.Contains(got, "during-partition") || !strings.Contains(got, "after-failover") {
		t.Fatalf("the member that was cut off has %s", got)
	}
}
