package server

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/datatree"
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
	// ClientPort is the plaintext client port; 0 picks a free one, -1 is none (a server
	// that serves TLS only: secureClientPort without clientPort, as ZooKeeper).
	ClientPort        int
	ClientPortAddress string
	DataDir           string
	DataLogDir        string
	TickTime          time.Duration
	MinSessionTimeout time.Duration // 0 = 2 x TickTime
	MaxSessionTimeout time.Duration // 0 = 20 x TickTime
	MaxClientCnxns    int           // per client IP; 0 = unlimited
	// MaxCnxns (maxCnxns, zookeeper.maxCnxns) limits the client connections of every
	// address together, four-letter words included; 0 (the default) is unlimited.
	MaxCnxns            int
	FourLetterWhitelist []string // "*" = all
	ExtendedTypes       bool
	// Emulate353TTLNodes (zookeeper.emulate353TTLNodes): read the TTL nodes ZooKeeper
	// 3.5.3 wrote as TTL nodes (datatree.Options.Emulate353TTL).
	Emulate353TTLNodes     bool
	MaxBuffer              int
	ContainerCheckInterval time.Duration
	// ContainerMaxNeverUsed (znode.container.maxNeverUsedIntervalMs, 0: never): a
	// container that never had a child is deleted once its mtime is this old. Every
	// member must agree on it. ContainerMaxPerMinute (znode.container.maxPerMinute,
	// 10000): the leader's cleanup deletes no faster.
	ContainerMaxNeverUsed time.Duration
	ContainerMaxPerMinute int
	SnapCount             uint64
	SnapSizeLimit         int64 // snapSizeLimitInKb in bytes: log bytes between snapshots; 0 or less = no limit
	SnapRetainCount       int
	FsyncWarning          time.Duration  // fsync.warningthresholdms: warn of a slower transaction log fdatasync; 0 = 1 s
	PauseMonitor          PauseMonitor   // jvm.pause.*: watch for pauses of the process (pause_monitor.go)
	SuperDigest           string         // "super:BASE64" as zookeeper.DigestAuthenticationProvider.superDigest
	DigestDisabled        bool           // zookeeper.DigestAuthenticationProvider.enabled=false: no digest scheme (addauth, ACLs, super digest)
	DigestAlgorithm       string         // zookeeper.DigestAuthenticationProvider.digestAlg (Java's name); "" = SHA1
	MaxOutstanding        int            // per connection, before the reader stops reading
	Throttle              ThrottleConfig // ZooKeeper's request throttle (throttle.go)
	// ConnThrottle is ZooKeeper's connection throttle (conn_throttle.go).
	ConnThrottle ConnThrottleConfig
	// NoForceSync is ZooKeeper's forceSync=no, an operator's opt-in: writes are answered
	// without an fdatasync of the log, and a machine's crash can lose them.
	NoForceSync bool
	// SkipACL (zookeeper.skipACL=yes) makes every caller of this member pass every ACL
	// check, as ZooKeeper's checkACL returns at once: its clients' reads, and their
	// writes, whose entries carry the pass to every member (Entry.Super).
	SkipACL bool
	// LargeRequests bounds the bytes of large requests in process (large_requests.go).
	LargeRequests LargeRequestConfig
	AdminAuth     AdminAuth // the AdminServer's snapshot command (admin_snapshot.go)
	// TreeMemoryLimit (treeMemoryLimit, zkraft's own), if positive: once the memory the
	// tree's content takes (datatree's MemoryInUse) reaches it, writes that would grow
	// the tree are refused with QuotaExceeded (memcap.go). The zkraft command sets it to
	// a third of the process's memory ceiling when none is given.
	TreeMemoryLimit int64
	// MemoryLimit (memoryLimit, zkraft's own), if positive, is the whole process's
	// memory ceiling. The server does not read it: the zkraft command splits it between
	// TreeMemoryLimit and the Go runtime's memory limit before the server starts
	// (cmd/zkraft/memory.go).
	MemoryLimit int64
	// LongWork, if set, is told when the server starts a long computation (writing or
	// installing a snapshot of the whole tree) and, through the function it returns,
	// when it ends: the zkraft command gives the Go runtime its CPUs back meanwhile
	// (cmd/zkraft/procs.go).
	LongWork func() (done func())
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
	// LeaderServesNo (leaderServes=no, zookeeper.leaderServes): a cluster's leader takes
	// no clients (leader_serves.go).
	LeaderServesNo bool
	// NoDataDirAutocreate (zookeeper.datadir.autocreate=false): a data dir without a
	// store does not start (datadir.go).
	NoDataDirAutocreate bool
	// NoDBAutocreate (zookeeper.db.autocreate=false): a cluster member that starts on an
	// empty store refuses votes until it has synced with a leader, unless the data dir
	// holds the "initialize" marker, which the start consumes (datadir.go).
	NoDBAutocreate bool
	// EnsembleProvider: ZooKeeper's EnsembleAuthenticationProvider is registered (the
	// ensemble scheme, ensemble_auth.go); EnsembleNames (zookeeper.ensembleAuthName) are
	// the names it takes, nil: any.
	EnsembleProvider bool
	EnsembleNames    []string
	// SessionlessTimeout (zookeeper.nio.sessionlessCnxnTimeout, 10 s): a connection's
	// ConnectRequest (or four-letter word) must have arrived by then.
	SessionlessTimeout time.Duration
	// SASL is the DIGEST-MD5 setup (saslauth.go); EnforceAuth refuses requests of
	// connections that hold no identity of the enforced schemes.
	SASL        SASLConfig
	EnforceAuth EnforceAuthConfig
	// EnforceQuota (zookeeper.enforceQuota, off by default as in 3.8) refuses a create or
	// setData that would go over a hard quota with QuotaExceeded and logs writes over a
	// soft one. In a cluster the leader's setting applies (quorum.Config.EnforceQuota).
	EnforceQuota bool
	// AdminEnabled (admin.enableServer) serves ZooKeeper's AdminServer commands at
	// AdminHost:AdminPort (admin.serverAddress, admin.serverPort)
	// <AdminCommandURL>/<name> (admin.commandURL; "" is /commands) as JSON, and /healthz
	// and /ready. MetricsPort (metricsProvider.httpPort), if not 0, serves Prometheus
	// metrics at MetricsHost:MetricsPort/metrics. Both are off in
	// DefaultConfig; the zkraft command turns the admin server on at :8080 as ZooKeeper
	// does.
	AdminEnabled    bool
	AdminHost       string
	AdminPort       int
	AdminCommandURL string
	// AdminIdleTimeout (admin.idleTimeout) closes an AdminServer connection that has been
	// idle that long, between requests or before one is whole, as Jetty's connector does;
	// 0 is ZooKeeper's 30 s. A request's headers also get at most 5 s.
	AdminIdleTimeout time.Duration
	// Audit (audit.enable) logs ZooKeeper's audit events (audit.go).
	Audit bool
	// AdminTLS (admin.forceHttps, admin.portUnification, admin.needClientAuth) serves
	// the AdminServer over HTTPS with the ssl.quorum.* stores (admin_tls.go).
	AdminTLS    AdminTLS
	MetricsHost string
	MetricsPort int
	// MetricsNoJVMInfo (metricsProvider.exportJvmInfo=false) leaves the JVM series out
	// of /metrics, as ZooKeeper's Prometheus provider then does (metrics_jvm_memory.go).
	MetricsNoJVMInfo bool
	// DebugGCEndpoint (zkraft.debug.gcEndpoint) adds POST /debug/gc to the metrics
	// listener: a full collection, for benchmarks that read go_heap_live_bytes. Off by
	// default; not for production (anyone who reaches the port can stall the server).
	DebugGCEndpoint bool
	// SecureClientPort (secureClientPort) serves clients over TLS only, at
	// SecureClientPortAddress (secureClientPortAddress; empty: every address).
	// PortUnification (client.portUnification) makes the client port serve TLS and
	// plaintext clients alike. Both take their TLS settings from SSL: the ssl.* keys as
	// zoo.cfg names them (ssl.keyStore.location, ...; tlsconf.FromProperties).
	SecureClientPort        int
	SecureClientPortAddress string
	PortUnification         bool
	// NettyFactory: zookeeper.serverCnxnFactory names ZooKeeper's Netty factory, whose
	// counts of plain connections zkraft keeps (tls_guard.go).
	NettyFactory bool
	// TLSHandshakeLimit (zookeeper.netty.server.outstandingHandshake.limit) bounds the
	// TLS handshakes in progress on a unified client port (PortUnification), as
	// ZooKeeper's does; a connection over it is closed at once. 0 or less: no bound.
	TLSHandshakeLimit int
	// EarlyDropSecureHandshakes (zookeeper.netty.server.earlyDropSecureConnectionHandshakes)
	// closes a secure client port's connection before its TLS handshake while this
	// member serves nobody (no leader).
	EarlyDropSecureHandshakes bool
	SSL                       map[string]string
	// TLSHandshakeTimeout bounds a client's TLS handshake, and the wait for its first
	// byte on a unified port; 0 is Netty's 10 s.
	TLSHandshakeTimeout time.Duration
	// CertReload (client.certReload, ZooKeeper 3.9's) reloads the key and trust stores
	// when their files change; DefaultConfig turns it on (3.9's default is off).
	CertReload bool
	// X509Provider registers the x509 scheme (authProvider.x509 naming ZooKeeper's
	// X509AuthenticationProvider); a secure client port or port unification registers
	// it too, as ZooKeeper's QuorumPeerConfig.configureSSLAuth does. X509SuperUser
	// (zookeeper.X509AuthenticationProvider.superUser) is the certificate subject that
	// is a super user.
	X509Provider  bool
	X509SuperUser string

	// InitialConfiguration is the zoo.cfg text the server was started with, for the
	// initial_configuration admin command.
	InitialConfiguration string
	// SystemProperties are the -D properties of SERVER_JVMFLAGS and JVMFLAGS, read or
	// not, for the system_properties admin command (a later one wins, as in the JVM).
	SystemProperties map[string]string

	// ServerID (myid) and Servers (the server.N lines) make this server a cluster
	// member; no Servers: standalone.
	ServerID int
	Servers  []quorum.Peer
	// InitLimit and SyncLimit are zoo.cfg's, in ticks: shown (conf), and SyncLimit
	// ticks are how lately a member must have answered to count as synced (a
	// reconfig's quorum, mntr's synced followers); Raft's timing follows tickTime.
	InitLimit, SyncLimit int
	// Network carries the members' streams; nil is TCP. Tests set it to cut links.
	Network quorum.Network
	// QuorumSSL makes the streams between members mutual TLS (sslQuorum, ssl.quorum.*;
	// quorum_tls.go).
	QuorumSSL QuorumSSL
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
		ContainerMaxPerMinute:  10000,
		SnapCount:              100000,
		SnapSizeLimit:          4 << 30,
		SnapRetainCount:        3,
		MaxOutstanding:         1000,
		CertReload:             true,
		Throttle:               DefaultThrottle(),
		ConnThrottle:           DefaultConnThrottle(),
		LargeRequests:          DefaultLargeRequests(),
		SessionlessTimeout:     10 * time.Second,
		AdminAuth:              DefaultAdminAuth(),
		QuorumSSL:              QuorumSSL{HostnameVerification: true},
		PauseMonitor:           DefaultPauseMonitor(),
		TLSHandshakeLimit:      -1,
	}
}

// sessionless is the effective SessionlessTimeout: 10 s unless it is positive.
func (c *Config) sessionless() time.Duration {
	if c.SessionlessTimeout > 0 {
		return c.SessionlessTimeout
	}
	return 10 * time.Second
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
	case c.ClientPort < -1 || c.ClientPort > 65535:
		return fmt.Errorf("clientPort %d is not a port", c.ClientPort)
	case c.ClientPort == -1 && c.SecureClientPort == 0:
		return fmt.Errorf("neither clientPort nor secureClientPort is set")
	case c.DataDir == "":
		return fmt.Errorf("dataDir is not set")
	case c.TickTime <= 0:
		return fmt.Errorf("tickTime %v must be positive", c.TickTime)
	case c.MinTimeout() > c.MaxTimeout():
		return fmt.Errorf("minSessionTimeout %v is larger than maxSessionTimeout %v", c.MinTimeout(), c.MaxTimeout())
	case c.MaxBuffer < 1024:
		return fmt.Errorf("jute.maxbuffer %d is too small", c.MaxBuffer)
	case c.Throttle.MaxRequests < 0 || c.Throttle.ThrottledOpWaitTime < 0:
		return fmt.Errorf("request throttle settings must not be negative")
	case c.Throttle.MaxRequests > 0 && c.Throttle.StallTime <= 0:
		return fmt.Errorf("zookeeper.request_throttle_stall_time %v must be positive", c.Throttle.StallTime)
	case c.TreeMemoryLimit < 0:
		return fmt.Errorf("treeMemoryLimit %d must not be negative", c.TreeMemoryLimit)
	case c.MemoryLimit < 0:
		return fmt.Errorf("memoryLimit %d must not be negative", c.MemoryLimit)
	case c.MaxClientCnxns < 0:
		return fmt.Errorf("maxClientCnxns %d must not be negative", c.MaxClientCnxns)
	case c.MaxCnxns < 0:
		return fmt.Errorf("maxCnxns %d must not be negative", c.MaxCnxns)
	case c.ContainerCheckInterval <= 0:
		return fmt.Errorf("znode.container.checkIntervalMs %v must be positive", c.ContainerCheckInterval)
	case c.SnapRetainCount < 1:
		return fmt.Errorf("autopurge.snapRetainCount %d must be at least 1", c.SnapRetainCount)
	case c.SecureClientPort < 0 || c.SecureClientPort > 65535:
		return fmt.Errorf("secureClientPort %d is not a port", c.SecureClientPort)
	case c.SecureClientPortAddress != "" && c.SecureClientPort == 0:
		return fmt.Errorf("secureClientPortAddress is set but secureClientPort is not set")
	case c.SuperDigest != "" && !strings.Contains(c.SuperDigest, ":"):
		return fmt.Errorf("superDigest %q is not user:digest", c.SuperDigest)
	case len(c.Servers) > 0 && (c.ServerID < 1 || c.ServerID > 254):
		return fmt.Errorf("myid %d must be 1..254 in a cluster", c.ServerID)
	}
	if _, err := datatree.NewDigester(c.DigestAlgorithm); err != nil {
		return fmt.Errorf("DigestAuthenticationProvider.digestAlg: %w", err)
	}
	if _, err := c.tlsSource(nil); err != nil {
		return fmt.Errorf("ssl: %w", err)
	}
	if err := c.EnforceAuth.validate(c.schemeRegistered); err != nil {
		return err
	}
	if len(c.Servers) > 0 {
		// As ZooKeeper, a standalone server ignores sslQuorum.
		if err := c.QuorumSSL.validate(); err != nil {
			return err
		}
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

// schemeRegistered reports whether ZooKeeper would have a provider for the scheme
// (ProviderRegistry): ip always, digest unless disabled, sasl and x509 when configured.
func (c *Config) schemeRegistered(scheme string) bool {
	switch scheme {
	case "ip":
		return true
	case "digest":
		return !c.DigestDisabled
	case "sasl":
		return c.SASL.AuthProvider
	case "x509":
		return c.x509Registered()
	case "ensemble":
		return c.EnsembleProvider
	}
	return false
}

// x509Registered reports whether the x509 scheme is registered.
func (c *Config) x509Registered() bool {
	return c.X509Provider || c.SecureClientPort != 0 || c.PortUnification
}

// fourLetterAllowed reports whether cmd is whitelisted. srvr always is (zkServer.sh
// status needs it), and isro is with read-only mode on, as ZooKeeper's
// FourLetterCommands.isEnabled adds them to any whitelist.
func (c *Config) fourLetterAllowed(cmd string) bool {
	if cmd == "srvr" || (cmd == "isro" && c.ReadOnlyMode) {
		return true
	}
	for _, w := range c.FourLetterWhitelist {
		if w == "*" || w == cmd {
			return true
		}
	}
	return false
}
