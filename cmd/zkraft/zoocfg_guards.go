package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/zkraft/zkraft/server"
)

// guardKeys are ZooKeeper's request throttle and AdminServer settings. ZooKeeper
// reads them as system properties (zookeeper.<key>); a zoo.cfg key it does not know
// becomes the system property zookeeper.<key>, so both spellings work in zoo.cfg, and
// the prefixed one in JVMFLAGS.
var guardKeys = map[string]func(c *server.Config, v string) error{
	"request_throttle_max_requests":  intKey(func(c *server.Config, n int) { c.Throttle.MaxRequests = n }),
	"request_throttle_stall_time":    msKey(func(c *server.Config, d time.Duration) { c.Throttle.StallTime = d }),
	"request_throttle_drop_stale":    propertyBool(func(c *server.Config, b bool) { c.Throttle.DropStale = b }),
	"request_stale_connection_check": propertyBool(func(c *server.Config, b bool) { c.Throttle.StaleConnectionCheck = b }),
	"request_stale_latency_check":    propertyBool(func(c *server.Config, b bool) { c.Throttle.StaleLatencyCheck = b }),
	"throttled_op_wait_time":         msKey(func(c *server.Config, d time.Duration) { c.Throttle.ThrottledOpWaitTime = d }),
	"admin.snapshot.enabled":         propertyBool(func(c *server.Config, b bool) { c.AdminAuth.SnapshotEnabled = b }),
	"admin.restore.enabled":          propertyBool(func(c *server.Config, b bool) { c.AdminAuth.RestoreEnabled = b }),
	"admin.rateLimiterIntervalInMS":  msKey(func(c *server.Config, d time.Duration) { c.AdminAuth.RateLimitInterval = d }),
	// The ip scheme of an AdminServer command (ZooKeeper 3.9) names X-Forwarded-For's
	// first address (server/admin_auth.go).
	"IPAuthenticationProvider.usexforwardedfor": propertyBool(func(c *server.Config, b bool) { c.AdminAuth.UseXForwardedFor = b }),
	// ZooKeeper's audit log (server/audit.go), written to the server's log.
	"audit.enable": propertyBool(func(c *server.Config, b bool) { c.Audit = b }),
	"audit.impl.class": func(_ *server.Config, v string) error {
		switch v {
		case "org.apache.zookeeper.audit.Slf4jAuditLogger", "org.apache.zookeeper.audit.Log4jAuditLogger":
			return nil
		}
		return fmt.Errorf("%q: zkraft writes audit events to its log (ZooKeeper's Slf4jAuditLogger); another class cannot be loaded", v)
	},
	// The AdminServer's HTTPS, with the ssl.quorum.* stores (server/admin_tls.go).
	"admin.forceHttps":      propertyBool(func(c *server.Config, b bool) { c.AdminTLS.ForceHTTPS = b }),
	"admin.portUnification": propertyBool(func(c *server.Config, b bool) { c.AdminTLS.PortUnification = b }),
	"admin.needClientAuth":  propertyBool(func(c *server.Config, b bool) { c.AdminTLS.NeedClientAuth = b }),
	// A cluster's leader takes no clients when this is exactly "no", as Leader.lead reads
	// it (server/leader_serves.go).
	"leaderServes": func(c *server.Config, v string) error { c.LeaderServesNo = v == "no"; return nil },
	// A data dir without a store stops the start, unless this is "true" in any case (the
	// default), as FileTxnSnapLog reads it (server/datadir.go).
	"datadir.autocreate": propertyBool(func(c *server.Config, b bool) { c.NoDataDirAutocreate = !b }),
	// An empty store takes part in no election until it has synced, unless this is
	// "true" in any case (the default), as FileTxnSnapLog reads it (server/datadir.go).
	"db.autocreate":              propertyBool(func(c *server.Config, b bool) { c.NoDBAutocreate = !b }),
	"nio.sessionlessCnxnTimeout": msKey(func(c *server.Config, d time.Duration) { c.SessionlessTimeout = d }),
	// The names EnsembleAuthenticationProvider takes, comma-separated, each trimmed.
	"ensembleAuthName": func(c *server.Config, v string) error {
		c.EnsembleNames = []string{}
		for _, n := range strings.Split(v, ",") {
			c.EnsembleNames = append(c.EnsembleNames, strings.TrimSpace(n))
		}
		return nil
	},
	// Every ACL check passes when this is exactly "yes", as ZooKeeperServer reads it
	// (server/config.go's SkipACL).
	"skipACL": func(c *server.Config, v string) error { c.SkipACL = v == "yes"; return nil },
	// The transaction log is not fdatasynced when this is exactly "no", as FileTxnLog
	// reads it (persistence/force_sync.go).
	"forceSync": func(c *server.Config, v string) error { c.NoForceSync = v == "no"; return nil },
	// A sasl ACL entry naming this user matches every SASL user (server/saslauth.go).
	"letAnySaslUserDoX": func(c *server.Config, v string) error { c.SASL.AnyUser = v; return nil },
	// The throttle drains at once when zkraft stops; there is nothing to wait for.
	"request_throttler.shutdownTimeout": func(*server.Config, string) error { return nil },
}

func init() {
	// zkraft's own: the tree's memory cap (server/memcap.go), in bytes or with a k, m
	// or g suffix.
	zooCfgKeys["treeMemoryLimit"] = func(c *server.Config, v string) error {
		n, err := parseBytes(v)
		c.TreeMemoryLimit = n
		return err
	}
	// zkraft's own: the process's memory ceiling (memory.go), split between the tree's
	// cap and the Go runtime's memory limit.
	zooCfgKeys["memoryLimit"] = func(c *server.Config, v string) error {
		n, err := parseBytes(v)
		c.MemoryLimit = n
		return err
	}
	for k, set := range guardKeys {
		registerProperty(k, set)
	}
}

// registerProperty takes a ZooKeeper system property zookeeper.<key> in zoo.cfg with or
// without its prefix, and in JVMFLAGS with it.
func registerProperty(key string, set func(*server.Config, string) error) {
	zooCfgKeys[key] = set
	zooCfgKeys["zookeeper."+key] = set
	systemProperties["zookeeper."+key] = true
}
