package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/jute"
	"github.com/zkraft/zkraft/quorum"
)

// Version is what zkraft reports as its ZooKeeper version (srvr, envi, mntr). Clients
// parse the leading x.y.z to decide which operations they may use; zkraft speaks the
// 3.9 client protocol with 3.8 semantics, and 3.9's where 3.9 changed a rule that 3.8
// clients do not notice (docs/compatibility.md), so it reports the 3.8 line it is
// tested against.
const Version = "3.8.0-zkraft-0.1.0"

// Config is the server's configuration; cmd/zkraft fills it from zoo.cfg, flags and
// the environment.
type Config struct {
	ClientPort             int
	ClientPortAddress      string
	DataDir                string
	DataLogDir             string
	TickTime               time.Duration
	MinSessionTimeout      time.Duration // 0 = 2 x TickTime
	MaxSessionTimeout      time.Duration // 0 = 20 x TickTime
	MaxClientCnxns         int           // per client IP; 0 = unlimited
	FourLetterWhitelist    []string      // "*" = all
	ExtendedTypes          bool
	MaxBuffer              int
	ContainerCheckInterval time.Duration
	SnapCount              uint64
	SnapRetainCount        int
	SuperDigest            string // "super:BASE64" as zookeeper.DigestAuthenticationProvider.superDigest
	MaxOutstanding         int    // per connection, before the reader stops reading
	// ReconfigEnabled lets a super user (or one with WRITE on /zookeeper/config) change
	// a cluster's membership with reconfig (reconfigEnabled, off by default as in 3.8).
	ReconfigEnabled bool
	// ExistsACLCheck (zookeeper.enableExistsACLCheck) makes exists need READ on a node
	// that exists, as ZooKeeper 3.9.2 and 3.8.4 do (ZOOKEEPER-2590); off, exists answers
	// anyone, as 3.8.0 to 3.8.3 did. ZooKeeper has no switch for it; DefaultConfig turns
	// it on.
	ExistsACLCheck bool
	// ReadOnlyMode (readonlymode.enabled) lets a cluster member that has lost its quorum
	// serve clients that ask for a read-only session from its own state, as ZooKeeper's
	// read-only server does (readonly.go). Off, such a member serves nobody.
	ReadOnlyMode bool
	// EnforceQuota (zookeeper.enforceQuota, off by default as in 3.8) refuses a create or
	// setData that would go over a hard quota with QuotaExceeded and logs writes over a
	// soft one. In a cluster the leader's setting applies (quorum.Config.EnforceQuota).
	EnforceQuota bool
	// AdminEnabled (admin.enableServer) serves ZooKeeper's AdminServer commands at
	// AdminHost:AdminPort (admin.serverAddress, admin.serverPort) /commands/<name> as
	// JSON, and /healthz and /ready. MetricsPort (metricsProvider.httpPort), if not 0,
	// serves Prometheus metrics at MetricsHost:MetricsPort/metrics. Both are off in
	// DefaultConfig; the zkraft command turns the admin server on at :8080 as ZooKeeper
	// does.
	AdminEnabled bool
	AdminHost    string
	AdminPort    int
	MetricsHost  string
	MetricsPort  int
	// InitialConfiguration is the zoo.cfg text the server was started with, for the
	// initial_configuration admin command.
	InitialConfiguration string

	// ServerID (myid) and Servers (the server.N lines) make this server a cluster
	// member; no Servers: standalone.
	ServerID int
	Servers  []quorum.Peer
	// Network carries the members' streams; nil is TCP. Tests set it to cut links.
	Network quorum.Network
	// Tune, if set, changes the node's settings last (tests: a long CommitTimeout, few
	// trailing log entries).
	Tune func(*quorum.Config)
}

// DefaultConfig returns ZooKeeper's defaults with data in ./data.
func DefaultConfig() Config {
	return Config{
		ClientPort:             2181,
		DataDir:                "./data",
		TickTime:               2 * time.Second,
		MaxClientCnxns:         60,
		FourLetterWhitelist:    []string{"srvr"},
		ExtendedTypes:          true,
		ExistsACLCheck:         true,
		MaxBuffer:              jute.DefaultMaxBuffer,
		ContainerCheckInterval: time.Minute,
		SnapCount:              100000,
		SnapRetainCount:        3,
		MaxOutstanding:         1000,
	}
}

// MinTimeout is the effective minSessionTimeout.
func (c *Config) MinTimeout() time.Duration {
	if c.MinSessionTimeout > 0 {
		return c.MinSessionTimeout
	}
	return 2 * c.TickTime
}

// MaxTimeout is the effective maxSessionTimeout.
func (c *Config) MaxTimeout() time.Duration {
	if c.MaxSessionTimeout > 0 {
		return c.MaxSessionTimeout
	}
	return 20 * c.TickTime
}

// Validate names the first bad field.
func (c *Config) Validate() error {
	switch {
	case c.ClientPort < 0 || c.ClientPort > 65535:
		return fmt.Errorf("clientPort %d is not a port", c.ClientPort)
	case c.DataDir == "":
		return fmt.Errorf("dataDir is not set")
	case c.TickTime <= 0:
		return fmt.Errorf("tickTime %v must be positive", c.TickTime)
	case c.MinTimeout() > c.MaxTimeout():
		return fmt.Errorf("minSessionTimeout %v is larger than maxSessionTimeout %v", c.MinTimeout(), c.MaxTimeout())
	case c.MaxBuffer < 1024:
		return fmt.Errorf("jute.maxbuffer %d is too small", c.MaxBuffer)
	case c.MaxClientCnxns < 0:
		return fmt.Errorf("maxClientCnxns %d must not be negative", c.MaxClientCnxns)
	case c.ContainerCheckInterval <= 0:
		return fmt.Errorf("znode.container.checkIntervalMs %v must be positive", c.ContainerCheckInterval)
	case c.SnapRetainCount < 1:
		return fmt.Errorf("autopurge.snapRetainCount %d must be at least 1", c.SnapRetainCount)
	case c.SuperDigest != "" && !strings.Contains(c.SuperDigest, ":"):
		return fmt.Errorf("superDigest %q is not user:digest", c.SuperDigest)
	case len(c.Servers) > 0 && (c.ServerID < 1 || c.ServerID > 254):
		return fmt.Errorf("myid %d must be 1..254 in a cluster", c.ServerID)
	}
	if len(c.Servers) > 0 {
		found := false
		for _, p := range c.Servers {
			found = found || p.ID == strconv.Itoa(c.ServerID)
		}
		if !found {
			return fmt.Errorf("myid %d has no server.%d line", c.ServerID, c.ServerID)
		}
	}
	return nil
}

// fourLetterAllowed reports whether cmd is whitelisted.
func (c *Config) fourLetterAllowed(cmd string) bool {
	for _, w := range c.FourLetterWhitelist {
		if w == "*" || w == cmd {
			return true
		}
	}
	return false
}
