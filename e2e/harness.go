package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server/ztest"
)

// Full reports whether the long forms run (ZKRAFT_E2E=full, as make e2e sets it).
func Full() bool { return os.Getenv("ZKRAFT_E2E") == "full" }

// Require stops the test when a program it drives is missing (err says why): a skip,
// unless ZKRAFT_REQUIRE_CLIENTS=1 (make test, make e2e) makes it a failure.
func Require(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("ZKRAFT_REQUIRE_CLIENTS") == "1" {
		t.Fatalf("%s: %v (run .ci/deps)", what, err)
	}
	t.Skipf("%s: %v (run .ci/deps, or make test)", what, err)
}

// Executable is nil when path is a file that can be run, or the reason.
func Executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// ZooKeeperPresent is nil when java and Debian's ZooKeeper 3.8 jars are installed.
func ZooKeeperPresent() error {
	if _, err := exec.LookPath("java"); err != nil {
		return err
	}
	_, err := os.Stat("/usr/share/java/zookeeper.jar")
	return err
}

// Pair is the same kind of deployment of each server, started side by side: one
// ZooKeeper 3.8 and one zkraft standalone server, or an ensemble of each.
type Pair struct {
	ZooKeeper, Zkraft *ztest.Cluster // a standalone server is a Cluster of one
}

// StartPair starts ZooKeeper and zkraft at the same time with the same options, n
// members each (1: a standalone server), and stops them when the test ends.
func StartPair(t testing.TB, n int, opts ztest.Options) Pair {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	type started struct {
		c   *ztest.Cluster
		err error
	}
	run := func(standalone func(ztest.Options) (*ztest.Server, error), cluster func(int, ztest.Options) (*ztest.Cluster, error)) chan started {
		ch := make(chan started, 1)
		go func() {
			if n > 1 {
				c, err := cluster(n, opts)
				ch <- started{c, err}
				return
			}
			s, err := standalone(opts)
			if err != nil {
				ch <- started{nil, err}
				return
			}
			ch <- started{&ztest.Cluster{Name: s.Name, Members: []*ztest.Server{s}}, nil}
		}()
		return ch
	}
	zkc, zrc := run(ztest.StartZooKeeper, ztest.StartZooKeeperEnsemble), run(ztest.StartZkraft, ztest.StartZkraftCluster)
	zk, zr := <-zkc, <-zrc
	for _, s := range []started{zk, zr} {
		if s.c != nil {
			t.Cleanup(s.c.Stop)
			// Before the stop: what the servers logged is the first thing to read when a
			// real client's test fails (a slow fdatasync, an election, an error).
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("server logs:\n%s", s.c.LogTails())
				}
			})
		}
	}
	if err := errors.Join(zk.err, zr.err); err != nil {
		t.Fatal(err)
	}
	return Pair{ZooKeeper: zk.c, Zkraft: zr.c}
}

// StartZooKeeper starts ZooKeeper 3.8 alone, n members (1: a standalone server), and
// stops it when the test ends.
func StartZooKeeper(t testing.TB, n int, opts ztest.Options) *ztest.Cluster {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	var c *ztest.Cluster
	if n > 1 {
		var err error
		if c, err = ztest.StartZooKeeperEnsemble(n, opts); err != nil {
			t.Fatal(err)
		}
	} else {
		s, err := ztest.StartZooKeeper(opts)
		if err != nil {
			t.Fatal(err)
		}
		c = &ztest.Cluster{Name: s.Name, Members: []*ztest.Server{s}}
	}
	t.Cleanup(c.Stop)
	return c
}

// LeaderAddr returns the client address of the member that leads (of a standalone
// server: its own).
func LeaderAddr(t testing.TB, c *ztest.Cluster) string {
	t.Helper()
	if len(c.Members) == 1 {
		return c.Members[0].Addr
	}
	i := c.AwaitLeader(10 * time.Second)
	if i < 0 {
		t.Fatalf("%s: no member leads", c.Name)
	}
	return c.Members[i].Addr
}

// Followers returns the client addresses of the members that do not lead (of a
// standalone server: its own).
func Followers(t testing.TB, c *ztest.Cluster) []string {
	t.Helper()
	if len(c.Members) == 1 {
		return []string{c.Members[0].Addr}
	}
	leader := c.AwaitLeader(10 * time.Second)
	if leader < 0 {
		t.Fatalf("%s: no member leads", c.Name)
	}
	var out []string
	for i, s := range c.Members {
		if i != leader {
			out = append(out, s.Addr)
		}
	}
	return out
}

// Process is a program started in its own process group, its stdout and stderr merged
// and read as lines. Stop (registered as a cleanup) kills the group if it still runs.
type Process struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed when the program has exited and its output is read
	err   error         // Wait's result, once done is closed

	mu    sync.Mutex
	out   []string      // every line read so far
	taken int           // lines Until has returned
	grew  chan struct{} // closed (and replaced) when a line is added or the output ends
	ended bool
}

// Start runs name with args in dir ("" for the test's own) and stops it when the test
// ends.
func Start(t testing.TB, dir, name string, args ...string) *Process {
	t.Helper()
	p, err := StartProcess(dir, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(5 * time.Second) })
	return p
}

// StartProcess is Start for a caller that stops the program itself (one that runs
// outside the test's goroutine, where t.Fatal may not be called).
func StartProcess(dir, name string, args ...string) (*Process, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	w.Close()
	p := &Process{cmd: cmd, stdin: stdin, done: make(chan struct{}), grew: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
		for sc.Scan() {
			p.mu.Lock()
			p.out = append(p.out, sc.Text())
			close(p.grew)
			p.grew = make(chan struct{})
			p.mu.Unlock()
		}
		r.Close()
		p.err = cmd.Wait()
		p.mu.Lock()
		p.ended = true
		close(p.grew)
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Send writes one line to the program's stdin.
func (p *Process) Send(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// CloseInput closes the program's stdin (end of input).
func (p *Process) CloseInput() error { return p.stdin.Close() }

// Until returns the lines printed since the last Until until one matches re (that one
// included), or an error with what was read when the program exits first or limit
// passes.
func (p *Process) Until(re *regexp.Regexp, limit time.Duration) ([]string, error) {
	var got []string
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		p.mu.Lock()
		for p.taken < len(p.out) {
			l := p.out[p.taken]
			p.taken++
			got = append(got, l)
			if re.MatchString(l) {
				p.mu.Unlock()
				return got, nil
			}
		}
		grew, ended := p.grew, p.ended
		p.mu.Unlock()
		if ended {
			<-p.done
			return got, fmt.Errorf("program exited (%v) before a line matched %q", p.err, re)
		}
		select {
		case <-grew:
		case <-timer.C:
			return got, fmt.Errorf("no line matched %q within %v", re, limit)
		}
	}
}

// Output is every line the program printed so far.
func (p *Process) Output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.out...)
}

// Rest returns the lines printed since the last Until (or Rest) and marks them read.
func (p *Process) Rest() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	rest := append([]string(nil), p.out[p.taken:]...)
	p.taken = len(p.out)
	return rest
}

// Pid is the program's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Running reports whether the program has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Wait waits for the program to exit on its own, at most limit, and returns its exit
// error (nil for status 0).
func (p *Process) Wait(limit time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(limit):
		return fmt.Errorf("%s still running after %v", p.cmd.Path, limit)
	}
}

// Stop closes stdin, sends SIGTERM to the group, and SIGKILL if it has not exited
// within grace. It returns the exit error, as Wait does.
func (p *Process) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return p.err
	default:
	}
	p.stdin.Close()
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return p.err
}

// Run runs a program to its end, at most limit (then its group is killed), and returns
// its merged output.
func Run(limit time.Duration, dir, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second // a child that left the group and kept the output open
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = errors.Join(err, fmt.Errorf("%s killed after %v", name, limit))
	}
	return out.String(), err
}

// Diff lists the lines where two transcripts differ, side by side, for a failure message.
func Diff(aName string, a []string, bName string, b []string) string {
	var sb strings.Builder
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		mark := "  "
		if x != y || i >= len(a) || i >= len(b) {
			mark = "!="
		}
		fmt.Fprintf(&sb, "%s %4d %-60q %q\n", mark, i+1, x, y)
	}
	return fmt.Sprintf("%s (left) vs %s (right):\n%s", aName, bName, sb.String())
}
