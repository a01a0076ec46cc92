package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The official image's variables configure a cluster member as its entrypoint would.
func TestEnvironmentOfTheZooKeeperImage(t *testing.T) {
	env := envOf(map[string]string{
		"ZOO_MY_ID":                  "2",
		"ZOO_SERVERS":                "server.1=zoo1:2888:3888;2181 server.2=zoo2:2888:3888;2181 server.3=zoo3:2888:3888:observer;2181",
		"ZOO_TICK_TIME":              "500",
		"ZOO_DATA_DIR":               "/data",
		"ZOO_MAX_CLIENT_CNXNS":       "7",
		"ZOO_4LW_COMMANDS_WHITELIST": "srvr,mntr",
		"ZOO_CFG_EXTRA":              "reconfigEnabled=true someFutureKey=1",
		"ZOO_INIT_LIMIT":             "5",
	})
	cmd := newStartCommand()
	var flags server.Config
	cfg, warnings, err := loadConfig(cmd, "", env, &flags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerID != 2 || len(cfg.Servers) != 3 || !cfg.Servers[2].Observer || cfg.Servers[1].PeerAddr != "zoo2:2888" ||
		cfg.Servers[0].RaftAddr != "zoo1:3888" || cfg.TickTime != 500*time.Millisecond || cfg.DataDir != "/data" ||
		cfg.MaxClientCnxns != 7 || !cfg.ReconfigEnabled || strings.Join(cfg.FourLetterWhitelist, ",") != "srvr,mntr" {
		t.Fatalf("config %+v", cfg)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "someFutureKey") || !strings.Contains(joined, "initLimit") {
		t.Fatalf("warnings %q", warnings)
	}
	if _, _, err := loadConfig(cmd, "", envOf(map[string]string{"ZOO_MY_ID": "two"}), &flags, nil); err == nil || !strings.Contains(err.Error(), "ZOO_MY_ID") {
		t.Fatalf("bad ZOO_MY_ID: %v", err)
	}
	if _, _, err := loadConfig(cmd, "", envOf(map[string]string{"ZOO_SERVERS": "server.1=a:1"}), &flags, nil); err == nil {
		t.Fatal("bad ZOO_SERVERS accepted")
	}
}

// zoo.cfg overrides the environment (its server lines replace ZOO_SERVERS), and flags
// override both; a member without an id reads myid.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "zoo.cfg")
	os.WriteFile(cfgPath, []byte("tickTime=300\ndataDir="+dir+"\nserver.1=a:1:2\nserver.2=b:1:2\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "myid"), []byte("1\n"), 0o644)
	env := envOf(map[string]string{"ZOO_TICK_TIME": "500", "ZOO_SERVERS": "server.9=z:1:2", "ZOO_MAX_CLIENT_CNXNS": "9"})
	cmd := newStartCommand()
	var flags server.Config
	cfg, _, err := loadConfig(cmd, cfgPath, env, &flags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != 300*time.Millisecond || cfg.MaxClientCnxns != 9 || len(cfg.Servers) != 2 || cfg.ServerID != 1 {
		t.Fatalf("config %+v", cfg)
	}
	if err := cmd.Flags().Parse([]string{"--tick-time", "1s", "--id", "3", "--servers", "server.3=c:1:2,server.4=d:1:2;2181"}); err != nil {
		t.Fatal(err)
	}
	servers, _ := cmd.Flags().GetStringSlice("servers")
	tick, _ := cmd.Flags().GetDuration("tick-time")
	id, _ := cmd.Flags().GetInt("id")
	flags.TickTime, flags.ServerID = tick, id
	cfg, _, err = loadConfig(cmd, cfgPath, env, &flags, servers)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != time.Second || cfg.ServerID != 3 || len(cfg.Servers) != 2 || cfg.Servers[1].ClientAddr != "0.0.0.0:2181" {
		t.Fatalf("flags over zoo.cfg: %+v", cfg)
	}
}

// A zoo.cfg mounted in ZOO_CONF_DIR is read, as the official image reads /conf/zoo.cfg;
// --config wins; without the file, the environment alone configures the server.
func TestMountedZooCfg(t *testing.T) {
	dir := t.TempDir()
	env := envOf(map[string]string{"ZOO_CONF_DIR": dir})
	if got := mountedConfig("", env); got != "" {
		t.Fatalf("no zoo.cfg mounted, got %q", got)
	}
	path := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(path, []byte("clientPort=3181\ndataDir=/var/zk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := mountedConfig("", env); got != path {
		t.Fatalf("mounted zoo.cfg: got %q", got)
	}
	if got := mountedConfig("/etc/other.cfg", env); got != "/etc/other.cfg" {
		t.Fatalf("--config: got %q", got)
	}
	cmd := newStartCommand()
	var flags server.Config
	cfg, _, err := loadConfig(cmd, mountedConfig("", env), env, &flags, nil)
	if err != nil || cfg.ClientPort != 3181 || cfg.DataDir != "/var/zk" || !strings.Contains(cfg.InitialConfiguration, "clientPort=3181") {
		t.Fatalf("config from the mounted zoo.cfg: %v %+v", err, cfg)
	}
}

// Read-only mode comes as ZooKeeper users pass it, -Dreadonlymode.enabled in the
// image's JVMFLAGS or SERVER_JVMFLAGS (other -D properties zkraft does not read are
// named in a warning, JVM options are ignored), or as a zoo.cfg key, or as a flag.
func TestReadOnlyModeSettings(t *testing.T) {
	var flags server.Config
	load := func(env map[string]string, configPath string, args ...string) (server.Config, []string) {
		t.Helper()
		cmd := newStartCommand()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		flags.ReadOnlyMode, _ = cmd.Flags().GetBool("read-only-mode")
		cfg, warnings, err := loadConfig(cmd, configPath, envOf(env), &flags, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg, warnings
	}
	if cfg, _ := load(nil, ""); cfg.ReadOnlyMode {
		t.Fatal("read-only mode on by default")
	}
	cfg, warnings := load(map[string]string{
		"JVMFLAGS":        "-Xmx1g -Dreadonlymode.enabled=true -Dzookeeper.fsync.warningthresholdms=50 -Dzookeeper.someFutureSetting=50",
		"SERVER_JVMFLAGS": "-Djute.maxbuffer=4000000 -Dreadonlymode.enabled=false",
	}, "")
	if !cfg.ReadOnlyMode || cfg.MaxBuffer != 4000000 || cfg.FsyncWarning != 50*time.Millisecond {
		t.Fatalf("from JVMFLAGS (JVMFLAGS after SERVER_JVMFLAGS): %+v", cfg)
	}
	if joined := strings.Join(warnings, "\n"); len(warnings) != 1 || !strings.Contains(joined, "JVMFLAGS: -Dzookeeper.someFutureSetting") {
		t.Fatalf("warnings %q", warnings)
	}
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	os.WriteFile(path, []byte("readonlymode.enabled=true\n"), 0o644)
	if cfg, _ := load(nil, path); !cfg.ReadOnlyMode {
		t.Fatal("zoo.cfg readonlymode.enabled=true ignored")
	}
	if cfg, _ := load(nil, path, "--read-only-mode=false"); cfg.ReadOnlyMode {
		t.Fatal("--read-only-mode=false did not override zoo.cfg")
	}
	if cfg, _ := load(nil, "", "--read-only-mode"); !cfg.ReadOnlyMode {
		t.Fatal("--read-only-mode ignored")
	}
}

// exists needs READ unless zookeeper.enableExistsACLCheck=false comes as a -D property,
// a zoo.cfg key (with or without "zookeeper.", as ZooKeeper's zoo.cfg prefixes unknown
// keys) or --exists-acl-check=false.
func TestExistsACLCheckSettings(t *testing.T) {
	load := func(env map[string]string, configPath string, args ...string) server.Config {
		t.Helper()
		cmd := newStartCommand()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		var flags server.Config
		flags.ExistsACLCheck, _ = cmd.Flags().GetBool("exists-acl-check")
		cfg, _, err := loadConfig(cmd, configPath, envOf(env), &flags, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if !load(nil, "").ExistsACLCheck {
		t.Fatal("exists must need READ by default")
	}
	if load(map[string]string{"JVMFLAGS": "-Dzookeeper.enableExistsACLCheck=false"}, "").ExistsACLCheck {
		t.Fatal("-Dzookeeper.enableExistsACLCheck=false ignored")
	}
	for _, key := range []string{"enableExistsACLCheck", "zookeeper.enableExistsACLCheck"} {
		path := filepath.Join(t.TempDir(), "zoo.cfg")
		os.WriteFile(path, []byte(key+"=false\n"), 0o644)
		if load(nil, path).ExistsACLCheck {
			t.Fatalf("zoo.cfg %s=false ignored", key)
		}
		if !load(nil, path, "--exists-acl-check").ExistsACLCheck {
			t.Fatal("--exists-acl-check did not override zoo.cfg")
		}
	}
	if load(nil, "", "--exists-acl-check=false").ExistsACLCheck {
		t.Fatal("--exists-acl-check=false ignored")
	}
}

// The SASL keys come as -D properties (ZooKeeper's names), as zoo.cfg keys with or
// without "zookeeper.", by prefix (authProvider.N, zookeeper.superUser.N), or --jaas-config.
func TestSASLSettings(t *testing.T) {
	load := func(env map[string]string, configPath string, args ...string) (server.Config, []string) {
		t.Helper()
		var flags server.Config
		cmd := newStartCommand()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
		flags.SASL.JAASFile, _ = cmd.Flags().GetString("jaas-config")
		cfg, warnings, err := loadConfig(cmd, configPath, envOf(env), &flags, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg, warnings
	}
	cfg, warnings := load(map[string]string{
		"SERVER_JVMFLAGS": "-Djava.security.auth.login.config=/etc/zk/jaas.conf -Dzookeeper.authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"JVMFLAGS":        "-Dzookeeper.sasl.serverconfig=ZkServer -Dzookeeper.superUser=admin -Dzookeeper.superUser.2=root -Dzookeeper.sessionRequireClientSASLAuth=true -DsessionRequireClientSASLAuth=false",
	}, "")
	if cfg.SASL.JAASFile != "/etc/zk/jaas.conf" || cfg.SASL.Section != "ZkServer" || !cfg.SASL.AuthProvider ||
		strings.Join(cfg.SASL.SuperUsers, ",") != "admin,root" || !cfg.EnforceAuth.RequireClientSASLAuth {
		t.Fatalf("from JVMFLAGS: %+v %+v", cfg.SASL, cfg.EnforceAuth)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "-DsessionRequireClientSASLAuth") {
		t.Fatalf("warnings %q: want one, for the property ZooKeeper does not read", warnings)
	}
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	os.WriteFile(path, []byte("authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n"+
		"authProvider.2=com.example.Custom\nenforce.auth.enabled=true\nenforce.auth.schemes=sasl, digest\n"+
		"zookeeper.allowSaslFailedClients=true\nrequireClientAuthScheme=sasl\njava.security.auth.login.config=/a.conf\n"), 0o644)
	cfg, warnings = load(nil, path, "--jaas-config", "/b.conf")
	if !cfg.SASL.AuthProvider || !cfg.EnforceAuth.Enabled || strings.Join(cfg.EnforceAuth.Schemes, "|") != "sasl|digest" ||
		!cfg.SASL.AllowFailedClients || cfg.SASL.JAASFile != "/b.conf" {
		t.Fatalf("from zoo.cfg and --jaas-config: %+v %+v", cfg.SASL, cfg.EnforceAuth)
	}
	if joined := strings.Join(warnings, "\n"); len(warnings) != 2 || !strings.Contains(joined, "com.example.Custom") || !strings.Contains(joined, "requireClientAuthScheme is ignored") {
		t.Fatalf("warnings %q", warnings)
	}
}

func TestEnforceQuotaSettings(t *testing.T) {
	if loadFrom(t, nil, "").EnforceQuota {
		t.Fatal("quotas must not be enforced by default (ZooKeeper 3.8's default)")
	}
	for _, env := range []string{"JVMFLAGS", "SERVER_JVMFLAGS"} {
		if !loadFrom(t, map[string]string{env: "-Xmx1g -Dzookeeper.enforceQuota=true"}, "").EnforceQuota {
			t.Fatalf("%s -Dzookeeper.enforceQuota=true ignored", env)
		}
	}
	// In zoo.cfg ZooKeeper makes enforceQuota the system property zookeeper.enforceQuota.
	for _, key := range []string{"enforceQuota", "zookeeper.enforceQuota"} {
		path := filepath.Join(t.TempDir(), "zoo.cfg")
		os.WriteFile(path, []byte(key+"=true\n"), 0o644)
		if !loadFrom(t, nil, path).EnforceQuota {
			t.Fatalf("zoo.cfg %s=true ignored", key)
		}
	}
}

// 4lw.commands.whitelist, the admin.* keys, snapCount and preAllocSize are also
// ZooKeeper's system properties zookeeper.<key>, given as -D in JVMFLAGS.
func TestPrefixedSystemPropertiesAreZooCfgKeys(t *testing.T) {
	cfg := server.DefaultConfig()
	warnings, err := applyEnv(envOf(map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.4lw.commands.whitelist=ruok,conf " +
		"-Dzookeeper.admin.enableServer=false -Dzookeeper.admin.serverPort=9999 -Dzookeeper.admin.serverAddress=127.0.0.2 " +
		"-Dzookeeper.snapCount=5000"}), &cfg)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if strings.Join(cfg.FourLetterWhitelist, ",") != "ruok,conf" || cfg.AdminEnabled || cfg.AdminPort != 9999 || cfg.AdminHost != "127.0.0.2" {
		t.Fatalf("from SERVER_JVMFLAGS: whitelist %v, admin %v %s:%d", cfg.FourLetterWhitelist, cfg.AdminEnabled, cfg.AdminHost, cfg.AdminPort)
	}
	// ZooKeeper reads snapCount only as zookeeper.snapCount (ZooKeeperServer.getSnapCount);
	// zkraft named -Dzookeeper.snapCount in a warning and ignored it.
	if cfg.SnapCount != 5000 {
		t.Fatalf("-Dzookeeper.snapCount=5000: snapCount %d", cfg.SnapCount)
	}
}

// TestDigestProviderSettings: zookeeper.DigestAuthenticationProvider.enabled and
// .digestAlg are read from the JVM flags and from zoo.cfg (which ZooKeeper turns into
// those properties); enabled as Java's Boolean.parseBoolean reads it: only "true" in any
// case keeps digest on.
func TestDigestProviderSettings(t *testing.T) {
	if loadFrom(t, nil, "").DigestDisabled {
		t.Fatal("digest must be enabled by default")
	}
	if !loadFrom(t, map[string]string{"JVMFLAGS": "-Dzookeeper.DigestAuthenticationProvider.enabled=false"}, "").DigestDisabled {
		t.Fatal("JVMFLAGS -Dzookeeper.DigestAuthenticationProvider.enabled=false ignored")
	}
	for value, disabled := range map[string]bool{"false": true, "no": true, "TRUE": false, "true": false} {
		path := filepath.Join(t.TempDir(), "zoo.cfg")
		os.WriteFile(path, []byte("DigestAuthenticationProvider.enabled="+value+"\n"), 0o644)
		if got := loadFrom(t, nil, path).DigestDisabled; got != disabled {
			t.Errorf("zoo.cfg DigestAuthenticationProvider.enabled=%s: disabled %v", value, got)
		}
	}
	if alg := loadFrom(t, map[string]string{"JVMFLAGS": "-Dzookeeper.DigestAuthenticationProvider.digestAlg=SHA-256"}, "").DigestAlgorithm; alg != "SHA-256" {
		t.Fatalf("JVMFLAGS digestAlg: %q", alg)
	}
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	os.WriteFile(path, []byte("DigestAuthenticationProvider.digestAlg=SHA3-256\n"), 0o644)
	if alg := loadFrom(t, nil, path).DigestAlgorithm; alg != "SHA3-256" {
		t.Fatalf("zoo.cfg digestAlg: %q", alg)
	}
}

// loadFrom is the configuration start runs with, from env and the zoo.cfg at configPath
// ("" for none).
func loadFrom(t *testing.T, env map[string]string, configPath string) server.Config {
	t.Helper()
	cfg, _, err := loadConfig(newStartCommand(), configPath, envOf(env), &server.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Every -D property of the two variables is kept for system_properties, read or not; a
// later one wins, as in the JVM, and one without a value is empty.
func TestJVMSystemPropertiesKeepsEveryProperty(t *testing.T) {
	env := map[string]string{
		"SERVER_JVMFLAGS": "-Xmx1g -Dzookeeper.snapCount=5 -Dmy.own=1",
		"JVMFLAGS":        "-Dmy.own=2 -Dbare -D -XX:+UseG1GC -Dkv=a=b",
	}
	got := jvmSystemProperties(func(k string) string { return env[k] })
	want := map[string]string{"zookeeper.snapCount": "5", "my.own": "2", "bare": "", "kv": "a=b"}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
