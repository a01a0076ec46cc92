package ztest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Cluster is a 3- or 5-member ensemble of real server processes on loopback, all zkraft
// or all ZooKeeper 3.8, configured by the same zoo.cfg: server.N lines, myid in each data
// dir, initLimit, syncLimit.
type Cluster struct {
	Name    string
	Members []*Server // Members[i] has myid i+1
	// leaderServesNo: the ensemble runs with leaderServes=no, so its leader's srvr says
	// it does not serve; the others following is what serving means.
	leaderServesNo bool
}

// StartZkraftCluster starts n zkraft members (the binary's `start --config`).
func StartZkraftCluster(n int, opts Options) (*Cluster, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = ZkraftBinary(); err != nil {
			return nil, err
		}
	}
	return startCluster("zkraft", n, opts, func(cfg, _ string) *exec.Cmd {
		return zkraftCommand(bin, opts.JVMFlags, cfg)
	})
}

// StartZooKeeperEnsemble starts n ZooKeeper 3.8 members (QuorumPeerMain).
func StartZooKeeperEnsemble(n int, opts Options) (*Cluster, error) {
	if _, err := os.Stat(filepath.Join(zooKeeperJars, "zookeeper.jar")); err != nil {
		return nil, errors.New("ztest: Debian's zookeeper package is not installed")
	}
	return startCluster("zookeeper", n, opts, func(cfg, tmp string) *exec.Cmd {
		heap := opts.JavaHeap
		if heap == "" {
			heap = "512m"
		}
		return zooKeeperCommand(heap, opts, tmp, "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg)
	})
}

func startCluster(name string, n int, opts Options, command func(cfg, tmp string) *exec.Cmd) (*Cluster, error) {
	c := &Cluster{Name: name, leaderServesNo: opts.ExtraConfig["leaderServes"] == "no"}
	ports := make([]int, 3*n) // client, peer, election per member
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	servers := map[string]string{}
	for i := 0; i < n; i++ {
		servers[fmt.Sprintf("server.%d", i+1)] = fmt.Sprintf("127.0.0.1:%d:%d", ports[3*i+1], ports[3*i+2])
	}
	for i := 0; i < n; i++ {
		tmp, err := os.MkdirTemp("", "ztest-"+name)
		if err != nil {
			c.Stop()
			return nil, err
		}
		dataDir := filepath.Join(tmp, "data")
		if err := os.MkdirAll(dataDir, 0o755); err != nil {
			os.RemoveAll(tmp)
			c.Stop()
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dataDir, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
			os.RemoveAll(tmp)
			c.Stop()
			return nil, err
		}
		base := baseConfig(dataDir, ports[3*i])
		base["initLimit"], base["syncLimit"] = "10", "5"
		base["admin.enableServer"] = "false"
		for k, v := range servers {
			base[k] = v
		}
		for _, k := range opts.DropConfig {
			delete(base, k)
		}
		cfg, err := writeConfig(tmp, ports[3*i], base, opts.ExtraConfig)
		if err != nil {
			os.RemoveAll(tmp)
			c.Stop()
			return nil, err
		}
		s := &Server{Name: name, Addr: fmt.Sprintf("127.0.0.1:%d", ports[3*i]), Port: ports[3*i], DataDir: dataDir,
			tmp: tmp, cfg: cfg, logf: opts.Logf, command: func() *exec.Cmd { return command(cfg, tmp) }}
		if err := s.launch(); err != nil {
			c.Stop()
			return nil, err
		}
		c.Members = append(c.Members, s)
	}
	if err := c.AwaitServing(90 * time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// AwaitServing waits until every running member serves with a mode and one leads (with
// leaderServes=no: every running member but one follows). A read-only member
// (readonlymode.enabled, still without a leader) does not count.
func (c *Cluster) AwaitServing(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		leaders, serving, running := 0, 0, 0
		for _, s := range c.Members {
			if !s.Running() {
				continue
			}
			running++
			out, err := FourLetter(s.Addr, "srvr")
			if err == nil && strings.Contains(out, "\nMode: ") && !strings.Contains(out, "\nMode: read-only") {
				serving++
				if strings.Contains(out, "\nMode: leader") {
					leaders++
				}
			}
		}
		if leaders == 1 && serving == running || c.leaderServesNo && leaders == 0 && serving == running-1 && running > 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("ztest: %s cluster not serving within %v (%d of %d running members serve, %d leaders)\n%s",
				c.Name, limit, serving, running, leaders, c.LogTails())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Restart starts every member again (they may have been killed or stopped), then waits
// up to limit until they serve.
func (c *Cluster) Restart(limit time.Duration) error {
	for _, m := range c.Members {
		if err := m.Restart(false); err != nil {
			return err
		}
	}
	return c.AwaitServing(limit)
}

// AwaitLeader waits up to limit for a member whose srvr says it leads and returns its
// index, or -1. Right after an election a new leader answers srvr as not serving until a
// quorum acknowledged it (ZooKeeper's and zkraft's alike), so one look can miss it.
func (c *Cluster) AwaitLeader(limit time.Duration) int {
	for deadline := time.Now().Add(limit); ; time.Sleep(50 * time.Millisecond) {
		if l := c.Leader(); l >= 0 || time.Now().After(deadline) {
			return l
		}
	}
}

// Leader returns the index of the member whose srvr says it leads, or -1.
func (c *Cluster) Leader() int {
	for i, s := range c.Members {
		if !s.Running() {
			continue
		}
		if out, err := FourLetter(s.Addr, "srvr"); err == nil && strings.Contains(out, "\nMode: leader") {
			return i
		}
	}
	return -1
}

// ConnectString is every member's client address, comma-separated, as clients take it.
func (c *Cluster) ConnectString() string {
	addrs := make([]string, len(c.Members))
	for i, s := range c.Members {
		addrs[i] = s.Addr
	}
	return strings.Join(addrs, ",")
}

// LogTails is the end of every member's log, for a failure message.
func (c *Cluster) LogTails() string {
	var logs strings.Builder
	for i, s := range c.Members {
		fmt.Fprintf(&logs, "--- %s member %d (%s):\n%s\n", c.Name, i+1, s.Addr, tail([]byte(s.Log())))
	}
	return logs.String()
}

// Stop stops every member and removes their data dirs.
func (c *Cluster) Stop() {
	for _, s := range c.Members {
		s.Stop()
	}
}
