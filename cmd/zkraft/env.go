package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/server"
)

// envKeys maps the official ZooKeeper image's environment variables to the zoo.cfg keys
// its entrypoint writes them as.
var envKeys = []struct{ env, key string }{
	{"ZOO_DATA_DIR", "dataDir"},
	{"ZOO_DATA_LOG_DIR", "dataLogDir"},
	{"ZOO_TICK_TIME", "tickTime"},
	{"ZOO_INIT_LIMIT", "initLimit"},
	{"ZOO_SYNC_LIMIT", "syncLimit"},
	{"ZOO_MAX_CLIENT_CNXNS", "maxClientCnxns"},
	{"ZOO_STANDALONE_ENABLED", "standaloneEnabled"},
	{"ZOO_ADMINSERVER_ENABLED", "admin.enableServer"},
	{"ZOO_AUTOPURGE_PURGEINTERVAL", "autopurge.purgeInterval"},
	{"ZOO_AUTOPURGE_SNAPRETAINCOUNT", "autopurge.snapRetainCount"},
	{"ZOO_4LW_COMMANDS_WHITELIST", "4lw.commands.whitelist"},
}

// systemProperties are the Java system properties of ZooKeeper's that zkraft takes from
// SERVER_JVMFLAGS and JVMFLAGS, where the official image's users put them (its
// zkServer.sh passes both to the JVM, in that order) as -Dname=value. Each is the zoo.cfg
// key of the same name. ZooKeeper reads readonlymode.enabled only this way: in its
// zoo.cfg the key becomes the unused zookeeper.readonlymode.enabled. The
// zookeeper.ssl.quorum.* properties are taken as well (sslquorum.go).
var systemProperties = map[string]bool{
	"readonlymode.enabled":                               true,
	"zookeeper.extendedTypesEnabled":                     true,
	"zookeeper.emulate353TTLNodes":                       true,
	"zookeeper.enforceQuota":                             true,
	"zookeeper.enableExistsACLCheck":                     true, // zkraft's own (docs/compatibility.md)
	"jute.maxbuffer":                                     true,
	"zookeeper.fsync.warningthresholdms":                 true,
	"fsync.warningthresholdms":                           true,
	"znode.container.checkIntervalMs":                    true,
	"znode.container.maxNeverUsedIntervalMs":             true,
	"znode.container.maxPerMinute":                       true,
	"zookeeper.DigestAuthenticationProvider.superDigest": true,
	"zookeeper.DigestAuthenticationProvider.enabled":     true,
	"zookeeper.DigestAuthenticationProvider.digestAlg":   true,
}

// zooCfgProperties are system properties whose zoo.cfg key is their name without
// "zookeeper.": ZooKeeper's zoo.cfg parser sets zookeeper.<key> for those keys, so they
// may be given either way (the Administrator's Guide names both), zoo.cfg's winning.
var zooCfgProperties = map[string]string{
	"zookeeper.4lw.commands.whitelist": "4lw.commands.whitelist",
	"zookeeper.maxCnxns":               "maxCnxns",
	"zookeeper.admin.enableServer":     "admin.enableServer",
	"zookeeper.admin.serverAddress":    "admin.serverAddress",
	"zookeeper.admin.serverPort":       "admin.serverPort",
	"zookeeper.admin.commandURL":       "admin.commandURL",
	"zookeeper.admin.idleTimeout":      "admin.idleTimeout",
	"zookeeper.snapCount":              "snapCount",
	"zookeeper.snapSizeLimitInKb":      "snapSizeLimitInKb",
	"zookeeper.preAllocSize":           "preAllocSize",
}

// jvmFlagsConfig turns the system properties zkraft knows in SERVER_JVMFLAGS and JVMFLAGS
// into zoo.cfg lines (a later one wins, as in the JVM) and names the other properties in
// warnings. Options that are not -D (heap size, GC) mean nothing to zkraft.
func jvmFlagsConfig(getenv func(string) string) (text string, warnings []string) {
	var b strings.Builder
	eachJVMProperty(getenv, func(env, name, value string) {
		if key, ok := zooCfgProperties[name]; ok {
			fmt.Fprintf(&b, "%s=%s\n", key, value)
			return
		}
		if !systemProperties[name] && !strings.HasPrefix(name, "zookeeper.ssl.quorum.") && !tlsSystemProperty(name) && !isSASLProperty(name) {
			warnings = append(warnings, fmt.Sprintf("%s: -D%s is not a system property zkraft reads and is ignored", env, name))
			return
		}
		fmt.Fprintf(&b, "%s=%s\n", name, value)
	})
	return b.String(), warnings
}

// eachJVMProperty calls f with every -D property of SERVER_JVMFLAGS, then of JVMFLAGS,
// in order (a later one wins in the JVM): its variable, name and value (empty without
// "=").
func eachJVMProperty(getenv func(string) string, f func(env, name, value string)) {
	for _, env := range []string{"SERVER_JVMFLAGS", "JVMFLAGS"} {
		for _, flag := range strings.Fields(getenv(env)) {
			if prop, ok := strings.CutPrefix(flag, "-D"); ok {
				name, value, _ := strings.Cut(prop, "=")
				f(env, name, value)
			}
		}
	}
}

// jvmSystemProperties are all the -D properties of SERVER_JVMFLAGS and JVMFLAGS, those
// zkraft reads and those it ignores, as the JVM would hold them: the AdminServer's
// system_properties lists them. A -D without a name is none.
func jvmSystemProperties(getenv func(string) string) map[string]string {
	props := map[string]string{}
	eachJVMProperty(getenv, func(_, name, value string) {
		if name != "" {
			props[name] = value
		}
	})
	return props
}

// envConfig turns the image's variables into zoo.cfg text: ZOO_SERVERS is a
// space-separated list of server.N=SPEC entries, ZOO_CFG_EXTRA of key=value pairs, and
// the system properties of SERVER_JVMFLAGS and JVMFLAGS come first, so that the ZOO_*
// variables win. ZOO_MY_ID is the server's id (the image writes it to myid). Unset
// variables add nothing.
func envConfig(getenv func(string) string) (text string, myID int, warnings []string, err error) {
	var b strings.Builder
	props, warnings := jvmFlagsConfig(getenv)
	b.WriteString(props)
	for _, k := range envKeys {
		if v := strings.TrimSpace(getenv(k.env)); v != "" {
			fmt.Fprintf(&b, "%s=%s\n", k.key, v)
		}
	}
	for _, list := range []string{"ZOO_SERVERS", "ZOO_CFG_EXTRA"} {
		for _, f := range strings.Fields(getenv(list)) {
			if !strings.Contains(f, "=") {
				return "", 0, warnings, fmt.Errorf("%s: %q is not key=value", list, f)
			}
			b.WriteString(f + "\n")
		}
	}
	if v := strings.TrimSpace(getenv("ZOO_MY_ID")); v != "" {
		if myID, err = strconv.Atoi(v); err != nil {
			return "", 0, warnings, fmt.Errorf("ZOO_MY_ID: %q is not a number", v)
		}
	}
	return b.String(), myID, warnings, nil
}

// applyEnv applies the image's variables to cfg and returns warnings for the keys zkraft
// does not support.
func applyEnv(getenv func(string) string, cfg *server.Config) ([]string, error) {
	text, myID, warnings, err := envConfig(getenv)
	if err != nil {
		return warnings, err
	}
	cfg.SystemProperties = jvmSystemProperties(getenv)
	more, err := parseZooCfg(strings.NewReader(text), cfg)
	warnings = append(warnings, more...)
	if err != nil {
		return warnings, fmt.Errorf("environment: %v", err)
	}
	if myID != 0 {
		cfg.ServerID = myID
	}
	return warnings, nil
}

// parseServersFlag reads --servers: comma-separated server.N=SPEC entries.
func parseServersFlag(list []string, cfg *server.Config) error {
	cfg.Servers = nil
	_, err := parseZooCfg(strings.NewReader(strings.Join(list, "\n")), cfg)
	return err
}
