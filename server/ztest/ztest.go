// Package ztest starts real servers for tests and benchmarks: zkraft (its built binary)
// and Apache ZooKeeper 3.8 from Debian's package, each on a free loopback port with a
// temporary data dir, configured through the same zoo.cfg keys. Every server started
// must be stopped; Stop also removes its data dir.
package ztest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Options configure a server start.
type Options struct {
	ExtraConfig map[string]string // extra zoo.cfg keys
	Binary      string            // zkraft binary; "" builds ./cmd/zkraft once per process
	Logf        func(format string, args ...any)
	DataDir     string // use this existing data dir instead of a fresh one; Stop leaves it
	JavaHeap    string // ZooKeeper's -Xmx; "" is 512m
	// JVMFlags are ZooKeeper's JVM options (-Dreadonlymode.enabled=true); zkraft gets them
	// in its JVMFLAGS environment variable, as the official image passes them on.
	JVMFlags []string
	// DropConfig are keys of the base zoo.cfg left out (4lw.commands.whitelist, to give
	// it as -D in JVMFlags instead).
	DropConfig []string
	// Log4j is a log4j.properties for ZooKeeper's logging. Without it ZooKeeper logs
	// nothing: the classpath of every jar in /usr/share/java gives slf4j several bindings
	// and it picks none. With it ZooKeeper runs with its own jars and log4j's binding.
	Log4j string
}

// Server is one running server process.
type Server struct {
	Name    string // "zookeeper" or "zkraft"
	Addr    string // 127.0.0.1:port
	Port    int
	DataDir string
	Cmd     *exec.Cmd

	tmp     string
	cfg     string // zoo.cfg
	command func() *exec.Cmd
	waited  chan struct{}
	logf    func(format string, args ...any)
	// securePort is the configured secureClientPort (0: none), which serving also waits
	// for: ZooKeeper opens it after srvr first answers on the plain port.
	securePort int
}

const (
	zooKeeperJars = "/usr/share/java"
	systemPython  = "/usr/bin/python3"
)

// Available is nil when java, the ZooKeeper jars and kazoo are installed, or the reason.
func Available() error {
	if _, err := exec.LookPath("java"); err != nil {
		return errors.New("java is not installed")
	}
	if _, err := os.Stat(filepath.Join(zooKeeperJars, "zookeeper.jar")); err != nil {
		return errors.New("Debian's zookeeper package is not installed")
	}
	if exec.Command(systemPython, "-c", "import kazoo").Run() != nil {
		return errors.New("python3-kazoo is not installed")
	}
	return nil
}

// FreePort returns a loopback port nobody listens on now. It picks below Linux's
// ephemeral range (32768 and up), so the port is not taken meanwhile as the local end of
// some outgoing connection, as a port the kernel handed out could be.
// A port is handed out once per process, so ports taken for servers that have not bound
// them yet are not handed out again; and each test binary (go test runs the packages in
// processes side by side) picks from a slice of the range of its own, so another
// package's tests do not take a port that a stopped server is about to bind again.
func FreePort() (int, error) {
	lo, n := portSlice()
	for i := 0; i < 200; i++ {
		port := lo + rand.IntN(n)
		portsMu.Lock()
		taken := handedOut[port]
		handedOut[port] = true
		portsMu.Unlock()
		if taken {
			continue
		}
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			l.Close()
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// portSlice is this process's part of the ports below the ephemeral range: one of
// portSlices slices of 20000-31999, chosen by the name of the test binary.
func portSlice() (lo, n int) {
	h := fnv.New32a()
	h.Write([]byte(filepath.Base(os.Args[0])))
	n = 12000 / portSlices
	return 20000 + int(h.Sum32()%portSlices)*n, n
}

// portSlices is how many slices the range is cut into: more than there are packages
// that start servers (server, quorum, e2e, cmd), fewer than would make a slice small.
const portSlices = 8

var (
	portsMu   sync.Mutex
	handedOut = map[int]bool{}

	buildOnce sync.Once
	built     string
	buildErr  error
)

// Main is a test package's TestMain: it runs the tests, then removes the zkraft binary
// they built (RemoveBuilt).
func Main(m *testing.M) {
	code := m.Run()
	RemoveBuilt()
	os.Exit(code)
}

// RemoveBuilt removes the binary ZkraftBinary built, if it built one: a test binary's
// TestMain calls it after its tests ran, so the build dirs do not pile up in the temp dir.
func RemoveBuilt() {
	if built != "" {
		os.RemoveAll(filepath.Dir(built))
	}
}

// ZkraftBinary is the zkraft binary the servers run (tests run its other commands too):
// ./cmd/zkraft built into a temp dir once per process, unless ZKRAFT_BINARY names one.
func ZkraftBinary() (string, error) {
	if b := os.Getenv("ZKRAFT_BINARY"); b != "" {
		return b, nil
	}
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		dir, err := os.MkdirTemp("", "ztest-bin")
		if err != nil {
			buildErr = err
			return
		}
		built = filepath.Join(dir, "zkraft")
		cmd := exec.Command("go", "build", "-o", built, "./cmd/zkraft")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/zkraft: %v\n%s", err, out)
		}
	})
	return built, buildErr
}

func writeConfig(dir string, port int, base, extra map[string]string) (string, error) {
	keys := map[string]string{}
	for k, v := range base {
		keys[k] = v
	}
	for k, v := range extra {
		keys[k] = v
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, keys[k])
	}
	path := filepath.Join(dir, "zoo.cfg")
	return path, os.WriteFile(path, []byte(b.String()), 0o644)
}

func baseConfig(dataDir string, port int) map[string]string {
	return map[string]string{
		"tickTime":               "2000",
		"dataDir":                dataDir,
		"clientPort":             fmt.Sprint(port),
		"clientPortAddress":      "127.0.0.1",
		"4lw.commands.whitelist": "*",
		"admin.enableServer":     "false",
	}
}

// StartZooKeeper starts Apache ZooKeeper 3.8 with extended types (TTL nodes) enabled.
func StartZooKeeper(opts Options) (*Server, error) {
	if _, err := os.Stat(filepath.Join(zooKeeperJars, "zookeeper.jar")); err != nil {
		return nil, errors.New("ztest: Debian's zookeeper package is not installed")
	}
	base := func(dataDir string, port int) map[string]string {
		m := baseConfig(dataDir, port)
		m["admin.enableServer"] = "false"
		return m
	}
	heap := opts.JavaHeap
	if heap == "" {
		heap = "512m"
	}
	return start("zookeeper", opts, base, func(cfg, tmp string) *exec.Cmd {
		return zooKeeperCommand(heap, opts, tmp, "org.apache.zookeeper.server.ZooKeeperServerMain", cfg)
	})
}

// zooKeeperCommand runs ZooKeeper's main class on cfg with extended types enabled.
func zooKeeperCommand(heap string, opts Options, tmp, main, cfg string) *exec.Cmd {
	args := append([]string{"-Xmx" + heap, "-Dzookeeper.extendedTypesEnabled=true"}, opts.JVMFlags...)
	log4j, classpath := "/etc/zookeeper/conf/log4j.properties", zooKeeperJars+"/*:/etc/zookeeper/conf"
	if opts.Log4j != "" {
		// zookeeper.jar's manifest names the jars it needs.
		log4j, classpath = opts.Log4j, strings.Join([]string{"/etc/zookeeper/conf", zooKeeperJars + "/zookeeper.jar",
			zooKeeperJars + "/slf4j-log4j12.jar", zooKeeperJars + "/log4j-1.2.jar"}, ":")
	}
	args = append(args, "-Dzookeeper.log.dir="+tmp, "-Dlog4j.configuration=file:"+log4j, "-cp", classpath, main, cfg)
	return exec.Command("java", args...)
}

// zkraftCommand runs the zkraft binary on cfg, with flags in JVMFLAGS.
func zkraftCommand(bin string, flags []string, cfg string) *exec.Cmd {
	cmd := exec.Command(bin, "start", "--config", cfg)
	if len(flags) > 0 {
		cmd.Env = append(os.Environ(), "JVMFLAGS="+strings.Join(flags, " "))
	}
	return cmd
}

// StartZkraft starts the zkraft binary with `start --config`.
func StartZkraft(opts Options) (*Server, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = ZkraftBinary(); err != nil {
			return nil, err
		}
	}
	return start("zkraft", opts, baseConfig, func(cfg, _ string) *exec.Cmd {
		return zkraftCommand(bin, opts.JVMFlags, cfg)
	})
}

func start(name string, opts Options, base func(string, int) map[string]string, command func(cfg, tmp string) *exec.Cmd) (*Server, error) {
	tmp, err := os.MkdirTemp("", "ztest-"+name)
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	dataDir := filepath.Join(tmp, "data")
	if opts.DataDir != "" {
		dataDir = opts.DataDir // outside tmp, so Stop does not remove it
	}
	keys := base(dataDir, port)
	for _, k := range opts.DropConfig {
		delete(keys, k)
	}
	cfg, err := writeConfig(tmp, port, keys, opts.ExtraConfig)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	s := &Server{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, DataDir: dataDir, tmp: tmp, cfg: cfg, logf: opts.Logf,
		command: func() *exec.Cmd { return command(cfg, tmp) }}
	fmt.Sscan(opts.ExtraConfig["secureClientPort"], &s.securePort)
	if err := s.launch(); err != nil {
		return nil, err
	}
	if err := s.awaitServing(60 * time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// launch starts the server's process; its output goes to (the end of) its log file.
func (s *Server) launch() error {
	cmd := s.command()
	logf, err := os.OpenFile(filepath.Join(s.tmp, s.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		os.RemoveAll(s.tmp)
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(s.tmp)
		return err
	}
	s.Cmd, s.waited = cmd, make(chan struct{})
	waited := s.waited
	go func() {
		cmd.Wait()
		logf.Close()
		close(waited)
	}()
	return nil
}

// awaitServing waits until srvr reports a mode (ruok answers before ZooKeeper serves) and
// the secure client port, if one is configured, listens.
func (s *Server) awaitServing(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if out, err := FourLetter(s.Addr, "srvr"); err == nil && strings.Contains(out, "\nMode: ") && (s.securePort <= 0 || listening(s.securePort)) {
			if s.logf != nil {
				s.logf("ztest: %s serving on %s (pid %d)", s.Name, s.Addr, s.Cmd.Process.Pid)
			}
			return nil
		}
		select {
		case <-s.waited:
			return fmt.Errorf("ztest: %s exited during start (exit code %d):\n%s", s.Name, s.Cmd.ProcessState.ExitCode(), tail([]byte(s.Log())))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("ztest: %s did not serve within %v:\n%s", s.Name, limit, tail([]byte(s.Log())))
}

func tail(b []byte) string {
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// Stop sends SIGTERM, then SIGKILL after 5 s, and removes the data dir.
func (s *Server) Stop() error {
	s.signal(syscall.SIGTERM)
	select {
	case <-s.waited:
	case <-time.After(5 * time.Second):
		s.signal(syscall.SIGKILL)
		<-s.waited
	}
	return os.RemoveAll(s.tmp)
}

// Kill sends SIGKILL and waits; the data dir stays (crash tests restart on it).
func (s *Server) Kill() error {
	s.signal(syscall.SIGKILL)
	<-s.waited
	return nil
}

// Restart starts a killed server again on the same config and data dir. With wait it
// returns once the server serves; a cluster member that cannot reach a quorum yet does
// not, so cluster restarts may pass false and wait on the cluster instead.
func (s *Server) Restart(wait bool) error {
	select {
	case <-s.waited:
	default:
		return fmt.Errorf("ztest: %s on %s is still running", s.Name, s.Addr)
	}
	if err := s.launch(); err != nil {
		return err
	}
	if wait {
		return s.awaitServing(60 * time.Second)
	}
	return nil
}

// SetConfig changes one zoo.cfg key of a stopped or killed server; the next Restart
// reads it.
func (s *Server) SetConfig(key, value string) error {
	select {
	case <-s.waited:
	default:
		return fmt.Errorf("ztest: %s on %s is still running", s.Name, s.Addr)
	}
	b, err := os.ReadFile(s.cfg)
	if err != nil {
		return err
	}
	keys := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[k] = v
		}
	}
	keys[key] = value
	_, err = writeConfig(s.tmp, s.Port, keys, nil)
	return err
}

// Running reports whether the process has not exited.
func (s *Server) Running() bool {
	select {
	case <-s.waited:
		return false
	default:
		return true
	}
}

func (s *Server) signal(sig syscall.Signal) {
	if s.Cmd.Process != nil {
		syscall.Kill(-s.Cmd.Process.Pid, sig) // the whole process group
	}
}

// Log returns what the server printed so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.tmp, s.Name+".log"))
	return string(b)
}

// FourLetter sends a four-letter word and reads the answer to EOF (5 s deadline).
func FourLetter(addr, cmd string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", err
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return b.String(), err
			}
			return b.String(), nil
		}
	}
}

// listening reports whether a socket listens on port, read from /proc/net/tcp and tcp6
// so that asking opens no connection a server would count or log.
func listening(port int) bool {
	want := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) > 3 && strings.HasSuffix(f[1], want) && f[3] == "0A" { // 0A: LISTEN
				return true
			}
		}
	}
	return false
}
