package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server"
)

// zooCfgKeys applies each supported zoo.cfg key to a server.Config. A key that is not
// here is reported as unsupported; a bad value is an error naming the key.
var zooCfgKeys = map[string]func(c *server.Config, v string) error{
	"clientPort":        intKey(func(c *server.Config, n int) { c.ClientPort = n }),
	"clientPortAddress": func(c *server.Config, v string) error { c.ClientPortAddress = v; return nil },
	"dataDir":           func(c *server.Config, v string) error { c.DataDir = v; return nil },
	"dataLogDir":        func(c *server.Config, v string) error { c.DataLogDir = v; return nil },
	"tickTime":          msKey(func(c *server.Config, d time.Duration) { c.TickTime = d }),
	"minSessionTimeout": msKey(func(c *server.Config, d time.Duration) { c.MinSessionTimeout = d }),
	"maxSessionTimeout": msKey(func(c *server.Config, d time.Duration) { c.MaxSessionTimeout = d }),
	"maxClientCnxns":    intKey(func(c *server.Config, n int) { c.MaxClientCnxns = n }),
	"4lw.commands.whitelist": func(c *server.Config, v string) error {
		c.FourLetterWhitelist = nil
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" {
				c.FourLetterWhitelist = append(c.FourLetterWhitelist, w)
			}
		}
		return nil
	},
	"extendedTypesEnabled":                               boolKey(func(c *server.Config, b bool) { c.ExtendedTypes = b }),
	"zookeeper.extendedTypesEnabled":                     boolKey(func(c *server.Config, b bool) { c.ExtendedTypes = b }),
	"enforceQuota":                                       boolKey(func(c *server.Config, b bool) { c.EnforceQuota = b }),
	"zookeeper.enforceQuota":                             boolKey(func(c *server.Config, b bool) { c.EnforceQuota = b }),
	"reconfigEnabled":                                    boolKey(func(c *server.Config, b bool) { c.ReconfigEnabled = b }),
	"enableExistsACLCheck":                               boolKey(func(c *server.Config, b bool) { c.ExistsACLCheck = b }),
	"zookeeper.enableExistsACLCheck":                     boolKey(func(c *server.Config, b bool) { c.ExistsACLCheck = b }),
	"readonlymode.enabled":                               boolKey(func(c *server.Config, b bool) { c.ReadOnlyMode = b }),
	"jute.maxbuffer":                                     intKey(func(c *server.Config, n int) { c.MaxBuffer = n }),
	"znode.container.checkIntervalMs":                    msKey(func(c *server.Config, d time.Duration) { c.ContainerCheckInterval = d }),
	"snapCount":                                          intKey(func(c *server.Config, n int) { c.SnapCount = uint64(n) }),
	"autopurge.snapRetainCount":                          intKey(func(c *server.Config, n int) { c.SnapRetainCount = n }),
	"fsync.warningthresholdms":                           msKey(func(c *server.Config, d time.Duration) { c.FsyncWarning = d }),
	"zookeeper.fsync.warningthresholdms":                 msKey(func(c *server.Config, d time.Duration) { c.FsyncWarning = d }),
	"DigestAuthenticationProvider.superDigest":           func(c *server.Config, v string) error { c.SuperDigest = v; return nil },
	"zookeeper.DigestAuthenticationProvider.superDigest": func(c *server.Config, v string) error { c.SuperDigest = v; return nil },
	"DigestAuthenticationProvider.enabled":               digestEnabled,
	"zookeeper.DigestAuthenticationProvider.enabled":     digestEnabled,
	"DigestAuthenticationProvider.digestAlg":             func(c *server.Config, v string) error { c.DigestAlgorithm = v; return nil },
	"zookeeper.DigestAuthenticationProvider.digestAlg":   func(c *server.Config, v string) error { c.DigestAlgorithm = v; return nil },
	"admin.enableServer":                                 boolKey(func(c *server.Config, b bool) { c.AdminEnabled = b }),
	"admin.serverAddress":                                func(c *server.Config, v string) error { c.AdminHost = v; return nil },
	"admin.serverPort":                                   intKey(func(c *server.Config, n int) { c.AdminPort = n }),
	"admin.commandURL":                                   func(c *server.Config, v string) error { c.AdminCommandURL = v; return nil },
	"metricsProvider.httpPort":                           intKey(func(c *server.Config, n int) { c.MetricsPort = n }),
	"metricsProvider.httpHost":                           func(c *server.Config, v string) error { c.MetricsHost = v; return nil },
	"zkraft.debug.gcEndpoint":                            boolKey(func(c *server.Config, b bool) { c.DebugGCEndpoint = b }),
	// ZooKeeper's Prometheus provider is what zkraft serves when httpPort is set.
	"metricsProvider.className": func(c *server.Config, v string) error {
		if !strings.HasSuffix(v, "PrometheusMetricsProvider") {
			return fmt.Errorf("zkraft serves Prometheus metrics only, not %s", v)
		}
		return nil
	},
}

// digestEnabled reads DigestAuthenticationProvider.enabled as ZooKeeper's
// Boolean.parseBoolean does: "true" in any case enables digest, anything else disables it.
func digestEnabled(c *server.Config, v string) error {
	c.DigestDisabled = !strings.EqualFold(v, "true")
	return nil
}

// ignoredKeys are accepted without effect in standalone mode; a warning says so.
var ignoredKeys = map[string]string{
	"initLimit":                         "zkraft's Raft timing follows tickTime",
	"syncLimit":                         "zkraft's Raft timing follows tickTime",
	"autopurge.purgeInterval":           "zkraft compacts its log behind snapshots on its own",
	"standaloneEnabled":                 "zkraft always runs standalone when no servers are listed",
	"preAllocSize":                      "not needed by zkraft's log",
	"requireClientAuthScheme":           "ZooKeeper 3.8 does not read it either; sessionRequireClientSASLAuth=true requires SASL",
	"jaasLoginRenew":                    "it renews Kerberos logins; zkraft's SASL is DIGEST-MD5, which has none",
	"kerberos.removeHostFromPrincipal":  "it rewrites Kerberos names; a DIGEST-MD5 identity is the user name",
	"kerberos.removeRealmFromPrincipal": "it rewrites Kerberos names; a DIGEST-MD5 identity is the user name",

	"sslQuorumReloadCertFiles": "zkraft reads the member certificates at start; restart a member to load new ones",
}

// shownKeys are ignored keys whose values are kept to be shown (a member's conf prints
// them, as ZooKeeper's does).
var shownKeys = map[string]func(*server.Config, string) error{
	"initLimit": intKey(func(c *server.Config, n int) { c.InitLimit = n }),
	"syncLimit": intKey(func(c *server.Config, n int) { c.SyncLimit = n }),
}

func intKey(set func(*server.Config, int)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		set(c, n)
		return nil
	}
}

func msKey(set func(*server.Config, time.Duration)) func(*server.Config, string) error {
	return intKey(func(c *server.Config, n int) { set(c, time.Duration(n)*time.Millisecond) })
}

func boolKey(set func(*server.Config, bool)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("not a boolean: %q", v)
		}
		set(c, b)
		return nil
	}
}

// parseZooCfg applies a zoo.cfg (Java properties: key=value, # comments) to cfg and
// returns a warning for every key it does not support.
func parseZooCfg(r io.Reader, cfg *server.Config) (warnings []string, err error) {
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || s[0] == '#' || s[0] == '!' {
			continue
		}
		i := strings.IndexAny(s, "=:")
		if i < 0 {
			return warnings, fmt.Errorf("line %d: %q is not key=value", line, s)
		}
		key, val := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		set, ok := zooCfgKeys[key]
		if !ok {
			if set, ok, err = quorumSSLSetter(key); err != nil {
				return warnings, fmt.Errorf("line %d: %v", line, err)
			}
			if !ok {
				set, ok = tlsKey(key)
			}
			if !ok {
				set, ok = saslKeys[key]
			}
		}
		if ok {
			if err := set(cfg, val); err != nil {
				return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
			}
			continue
		}
		if handled, warning := prefixedAuthKey(cfg, key, val); handled {
			if warning != "" {
				warnings = append(warnings, warning)
			}
			continue
		}
		if why, ok := ignoredKeys[key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s is ignored: %s", key, why))
			if set, ok := shownKeys[key]; ok {
				if err := set(cfg, val); err != nil {
					return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
				}
			}
			continue
		}
		if strings.HasPrefix(key, "server.") {
			p, err := quorum.ParsePeer(strings.TrimPrefix(key, "server."), val)
			if err != nil {
				return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
			}
			cfg.Servers = append(cfg.Servers, p)
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s is not supported by zkraft and is ignored", key))
	}
	return warnings, sc.Err()
}

// readMyID reads ZooKeeper's myid file from the data dir.
func readMyID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "myid"))
	if err != nil {
		return 0, fmt.Errorf("a cluster member needs its id: %v (or pass --id)", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a number", filepath.Join(dataDir, "myid"), strings.TrimSpace(string(b)))
	}
	return n, nil
}
