package main

import (
	"errors"
	"fmt"
	"io"
	"math"
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
	// How lately, in ticks, a member must have answered the leader to count as synced,
	// for a reconfig's quorum and mntr's synced followers (ZooKeeper's syncLimit);
	// Raft's timing follows tickTime.
	"syncLimit":         intKey(func(c *server.Config, n int) { c.SyncLimit = n }),
	"minSessionTimeout": msKey(func(c *server.Config, d time.Duration) { c.MinSessionTimeout = d }),
	"maxSessionTimeout": msKey(func(c *server.Config, d time.Duration) { c.MaxSessionTimeout = d }),
	// ZooKeeper limits connections only when maxClientCnxns is positive.
	"maxClientCnxns": intKey(func(c *server.Config, n int) { c.MaxClientCnxns = max(n, 0) }),
	// ZooKeeper limits all connections together only when maxCnxns is positive.
	"maxCnxns":           intKey(func(c *server.Config, n int) { c.MaxCnxns = max(n, 0) }),
	"zookeeper.maxCnxns": intKey(func(c *server.Config, n int) { c.MaxCnxns = max(n, 0) }),
	"4lw.commands.whitelist": func(c *server.Config, v string) error {
		c.FourLetterWhitelist = nil
		for _, w := range strings.Split(v, ",") {
			if w = strings.TrimSpace(w); w != "" {
				c.FourLetterWhitelist = append(c.FourLetterWhitelist, w)
			}
		}
		return nil
	},
	"extendedTypesEnabled":                               propertyBool(func(c *server.Config, b bool) { c.ExtendedTypes = b }),
	"zookeeper.extendedTypesEnabled":                     propertyBool(func(c *server.Config, b bool) { c.ExtendedTypes = b }),
	"emulate353TTLNodes":                                 propertyBool(func(c *server.Config, b bool) { c.Emulate353TTLNodes = b }),
	"zookeeper.emulate353TTLNodes":                       propertyBool(func(c *server.Config, b bool) { c.Emulate353TTLNodes = b }),
	"enforceQuota":                                       propertyBool(func(c *server.Config, b bool) { c.EnforceQuota = b }),
	"zookeeper.enforceQuota":                             propertyBool(func(c *server.Config, b bool) { c.EnforceQuota = b }),
	"reconfigEnabled":                                    configBool(func(c *server.Config, b bool) { c.ReconfigEnabled = b }),
	"enableExistsACLCheck":                               configBool(func(c *server.Config, b bool) { c.ExistsACLCheck = b }),
	"zookeeper.enableExistsACLCheck":                     configBool(func(c *server.Config, b bool) { c.ExistsACLCheck = b }),
	"readonlymode.enabled":                               propertyBool(func(c *server.Config, b bool) { c.ReadOnlyMode = b }),
	"jute.maxbuffer":                                     intKey(func(c *server.Config, n int) { c.MaxBuffer = n }),
	"znode.container.checkIntervalMs":                    msKey(func(c *server.Config, d time.Duration) { c.ContainerCheckInterval = d }),
	"znode.container.maxNeverUsedIntervalMs":             longMsKey(func(c *server.Config, d time.Duration) { c.ContainerMaxNeverUsed = d }),
	"znode.container.maxPerMinute":                       intKey(func(c *server.Config, n int) { c.ContainerMaxPerMinute = n }),
	"snapCount":                                          snapCount,
	"snapSizeLimitInKb":                                  snapSizeLimit,
	"zookeeper.snapSizeLimitInKb":                        snapSizeLimit,
	"autopurge.snapRetainCount":                          snapRetainCount,
	"fsync.warningthresholdms":                           msKey(func(c *server.Config, d time.Duration) { c.FsyncWarning = d }),
	"zookeeper.fsync.warningthresholdms":                 msKey(func(c *server.Config, d time.Duration) { c.FsyncWarning = d }),
	"DigestAuthenticationProvider.superDigest":           func(c *server.Config, v string) error { c.SuperDigest = v; return nil },
	"zookeeper.DigestAuthenticationProvider.superDigest": func(c *server.Config, v string) error { c.SuperDigest = v; return nil },
	"DigestAuthenticationProvider.enabled":               propertyBool(func(c *server.Config, b bool) { c.DigestDisabled = !b }),
	"zookeeper.DigestAuthenticationProvider.enabled":     propertyBool(func(c *server.Config, b bool) { c.DigestDisabled = !b }),
	"DigestAuthenticationProvider.digestAlg":             func(c *server.Config, v string) error { c.DigestAlgorithm = v; return nil },
	"zookeeper.DigestAuthenticationProvider.digestAlg":   func(c *server.Config, v string) error { c.DigestAlgorithm = v; return nil },
	// ZooKeeper's AdminServerFactory turns the AdminServer off for "false" exactly.
	"admin.enableServer":  func(c *server.Config, v string) error { c.AdminEnabled = v != "false"; return nil },
	"admin.serverAddress": func(c *server.Config, v string) error { c.AdminHost = v; return nil },
	"admin.serverPort":    intKey(func(c *server.Config, n int) { c.AdminPort = n }),
	"admin.commandURL":    func(c *server.Config, v string) error { c.AdminCommandURL = v; return nil },
	"admin.idleTimeout":   msKey(func(c *server.Config, d time.Duration) { c.AdminIdleTimeout = d }),
	// ZooKeeper's Jetty speaks HTTP/1.1 (11) unless told otherwise; so does zkraft, always.
	"admin.httpVersion": func(_ *server.Config, v string) error {
		if v == "11" {
			return nil
		}
		return notice(fmt.Sprintf("%q is ignored: the AdminServer speaks HTTP/1.1 (11)", v))
	},
	"metricsProvider.httpPort": intKey(func(c *server.Config, n int) { c.MetricsPort = n }),
	"metricsProvider.httpHost": func(c *server.Config, v string) error { c.MetricsHost = v; return nil },
	"zkraft.debug.gcEndpoint":  configBool(func(c *server.Config, b bool) { c.DebugGCEndpoint = b }),
	// Boolean.parseBoolean, as ZooKeeper's Prometheus provider reads it: only "true", in
	// any case, exports the JVM series.
	"metricsProvider.exportJvmInfo": func(c *server.Config, v string) error {
		c.MetricsNoJVMInfo = !strings.EqualFold(v, "true")
		return nil
	},
	// ZooKeeper's JVM pause monitor watches the zkraft process (server/pause_monitor.go).
	"jvm.pause.monitor":           configBool(func(c *server.Config, b bool) { c.PauseMonitor.On = b }),
	"jvm.pause.sleep.time.ms":     longMsKey(func(c *server.Config, d time.Duration) { c.PauseMonitor.Sleep = d }),
	"jvm.pause.info-threshold.ms": longMsKey(func(c *server.Config, d time.Duration) { c.PauseMonitor.Info = d }),
	"jvm.pause.warn-threshold.ms": longMsKey(func(c *server.Config, d time.Duration) { c.PauseMonitor.Warn = d }),
}

// silentMetricsProviders are ZooKeeper's built-in metrics providers, its default among
// them: they serve nothing over HTTP, so metricsProvider.httpPort means nothing under
// them. ZooKeeper's Prometheus provider is what zkraft serves when httpPort is set.
var silentMetricsProviders = map[string]bool{
	"org.apache.zookeeper.metrics.impl.DefaultMetricsProvider": true,
	"org.apache.zookeeper.metrics.impl.NullMetricsProvider":    true,
}

// metricsProvider checks metricsProvider.className and reports whether that provider
// serves no HTTP.
func metricsProvider(class string) (silent bool, err error) {
	if silentMetricsProviders[class] {
		return true, nil
	}
	if !strings.HasSuffix(class, "PrometheusMetricsProvider") {
		return false, fmt.Errorf("zkraft serves Prometheus metrics only, not %s", class)
	}
	return false, nil
}

// notice is what a key's reader returns for a value ZooKeeper corrects instead of
// refusing: the start goes on, and the notice is a warning.
type notice string

func (n notice) Error() string { return string(n) }

// snapSizeLimit reads snapSizeLimitInKb as ZooKeeper's Long.getLong does: a value that is
// not a number leaves the default (4 GB), and one not above 0 turns the limit off.
func snapSizeLimit(c *server.Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err != nil:
		return notice(fmt.Sprintf("%q is not a number; snapSizeLimitInKb stays %d", v, c.SnapSizeLimit>>10))
	case n <= 0:
		c.SnapSizeLimit = 0
	case n > math.MaxInt64>>10:
		c.SnapSizeLimit = math.MaxInt64
	default:
		c.SnapSizeLimit = n << 10
	}
	return nil
}

// snapCount is read as ZooKeeperServer.getSnapCount reads zookeeper.snapCount: a value
// that is not a number leaves the default, and fewer than 2 is 2.
func snapCount(c *server.Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 32)
	switch {
	case err != nil:
		return notice(fmt.Sprintf("%q is not a number; snapCount stays %d", v, c.SnapCount))
	case n < 2:
		c.SnapCount = 2
		return notice(fmt.Sprintf("%d is reset to 2, as ZooKeeper does", n))
	}
	c.SnapCount = uint64(n)
	return nil
}

// snapRetainCount is read as QuorumPeerConfig reads autopurge.snapRetainCount: fewer
// than 3 is 3.
func snapRetainCount(c *server.Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return fmt.Errorf("not an integer: %q", v)
	}
	c.SnapRetainCount = max(int(n), 3)
	if n < 3 {
		return notice(fmt.Sprintf("%d is reset to 3, as ZooKeeper does", n))
	}
	return nil
}

func intKey(set func(*server.Config, int)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 32) // a Java int, as Integer.parseInt reads it
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		set(c, int(n))
		return nil
	}
}

// longMsKey is msKey for a Java long.
func longMsKey(set func(*server.Config, time.Duration)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer: %q", v)
		}
		set(c, time.Duration(min(n, math.MaxInt64/int64(time.Millisecond)))*time.Millisecond)
		return nil
	}
}

func msKey(set func(*server.Config, time.Duration)) func(*server.Config, string) error {
	return intKey(func(c *server.Config, n int) { set(c, time.Duration(n)*time.Millisecond) })
}

// configBool reads a key QuorumPeerConfig parses itself as its parseBoolean does:
// "true" or "false" in any case; anything else stops the start.
func configBool(set func(*server.Config, bool)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Errorf("%q is not true or false", v)
		}
		set(c, strings.EqualFold(v, "true"))
		return nil
	}
}

// propertyBool reads a key ZooKeeper takes as a system property as Java's
// Boolean.parseBoolean and Boolean.getBoolean do: "true" in any case is true, anything
// else ("yes", "1") false, and no value stops the start.
func propertyBool(set func(*server.Config, bool)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error {
		set(c, strings.EqualFold(v, "true"))
		return nil
	}
}

// parseZooCfg applies a zoo.cfg (Java properties, read as ZooKeeper reads them:
// readProperties) to cfg and returns a warning for every key it does not support.
// ZooKeeper trims each key and value.
func parseZooCfg(r io.Reader, cfg *server.Config) (warnings []string, err error) {
	props, err := readProperties(r)
	if err != nil {
		return nil, err
	}
	var dynamicFile, serverKey, silentMetrics string
	for _, prop := range props {
		line, key, val := prop.line, strings.TrimSpace(prop.key), strings.TrimSpace(prop.value)
		switch key {
		case "dynamicConfigFile":
			dynamicFile = val
			continue
		case "metricsProvider.className":
			silent, err := metricsProvider(val)
			if err != nil {
				return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
			}
			if silent {
				silentMetrics = val
			}
			continue
		}
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
			var n notice
			if err := set(cfg, val); errors.As(err, &n) {
				warnings = append(warnings, fmt.Sprintf("%s: %v", key, n))
			} else if err != nil {
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
		if ig, ok := ignoredKeys[key]; ok {
			warnings = append(warnings, fmt.Sprintf("%s is ignored: %s", key, ig.why))
			if ig.read != nil {
				if err := ig.read(cfg, val); err != nil {
					return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
				}
			}
			continue
		}
		if strings.HasPrefix(key, "group.") || strings.HasPrefix(key, "weight.") {
			return warnings, fmt.Errorf("line %d: %s: zkraft has no hierarchical quorums (groups and weights): every voter counts once", line, key)
		}
		if strings.HasPrefix(key, "server.") {
			p, err := quorum.ParsePeer(strings.TrimPrefix(key, "server."), val)
			if err != nil {
				return warnings, fmt.Errorf("line %d: %s: %v", line, key, err)
			}
			cfg.Servers = append(cfg.Servers, p)
			serverKey = key
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s is not supported by zkraft and is ignored", key))
	}
	if silentMetrics != "" && cfg.MetricsPort != 0 {
		warnings = append(warnings, fmt.Sprintf("metricsProvider.httpPort is ignored: %s serves no metrics over HTTP, as in ZooKeeper", silentMetrics))
		cfg.MetricsPort = 0
	}
	if dynamicFile == "" {
		return warnings, nil
	}
	if serverKey != "" {
		return warnings, fmt.Errorf("%s must be in the dynamic config file when dynamicConfigFile is set", serverKey)
	}
	peers, err := readDynamicConfig(dynamicFile)
	if err != nil {
		return warnings, fmt.Errorf("dynamicConfigFile: %v", err)
	}
	cfg.Servers = append(cfg.Servers, peers...)
	return warnings, nil
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
