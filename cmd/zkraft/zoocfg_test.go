package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

func TestZooCfgKeysWarningsAndErrors(t *testing.T) {
	cfg := server.DefaultConfig()
	if !cfg.ExistsACLCheck {
		t.Fatal("exists must need READ by default, as in ZooKeeper 3.9.2")
	}
	warnings, err := parseZooCfg(strings.NewReader(`
# a comment
tickTime=500
clientPort = 2999
dataDir=/tmp/x
4lw.commands.whitelist=ruok, srvr
extendedTypesEnabled=false
enableExistsACLCheck=false
fsync.warningthresholdms=250
initLimit=10
syncLimit=5
jvm.pause.monitor=true
jvm.pause.sleep.time.ms=50
jvm.pause.info-threshold.ms=0
someFutureKey=1
server.1=a:2888:3888
server.2=b:2889:3889:observer;2181
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != 500*time.Millisecond || cfg.ClientPort != 2999 || cfg.DataDir != "/tmp/x" ||
		cfg.ExtendedTypes || cfg.ExistsACLCheck || strings.Join(cfg.FourLetterWhitelist, ",") != "ruok,srvr" ||
		cfg.FsyncWarning != 250*time.Millisecond || cfg.InitLimit != 10 || cfg.SyncLimit != 5 {
		t.Fatalf("parsed %+v", cfg)
	}
	// The pause monitor's keys set it; the one not given keeps ZooKeeper's default.
	if want := (server.PauseMonitor{On: true, Sleep: 50 * time.Millisecond, Info: 0, Warn: 10 * time.Second}); cfg.PauseMonitor != want {
		t.Fatalf("pause monitor %+v, want %+v", cfg.PauseMonitor, want)
	}
	joined := strings.Join(warnings, "\n")
	if len(cfg.Servers) != 2 || cfg.Servers[0].PeerAddr != "a:2888" || cfg.Servers[0].RaftAddr != "a:3888" ||
		cfg.Servers[0].Observer || !cfg.Servers[1].Observer || cfg.Servers[1].ID != "2" {
		t.Fatalf("servers %+v", cfg.Servers)
	}
	for _, key := range []string{"initLimit", "someFutureKey"} {
		if !strings.Contains(joined, key) {
			t.Errorf("no warning names %s: %q", key, warnings)
		}
	}
	for _, key := range []string{"syncLimit", "jvm.pause"} { // they have an effect
		if strings.Contains(joined, key) {
			t.Errorf("a warning names %s: %q", key, warnings)
		}
	}
	if _, err := parseZooCfg(strings.NewReader("jvm.pause.monitor=yes\n"), &cfg); err == nil || !strings.Contains(err.Error(), "jvm.pause.monitor") {
		t.Fatalf("jvm.pause.monitor=yes, which ZooKeeper refuses: %v", err)
	}
	if _, err := parseZooCfg(strings.NewReader("tickTime=soon\n"), &cfg); err == nil || !strings.Contains(err.Error(), "tickTime") {
		t.Fatalf("bad value: %v", err)
	}
}

func TestServerLineErrors(t *testing.T) {
	for _, line := range []string{"server.0=a:1:2", "server.1=a:1", "server.1=a:x:2", "server.1=a:1:2:boss"} {
		cfg := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader(line+"\n"), &cfg); err == nil || !strings.Contains(err.Error(), "server.") {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// A zoo.cfg as ZooKeeper 3.5+ writes it keeps the members in dynamicConfigFile. zkraft
// warned that the key was unsupported and started standalone on 2181; ZooKeeper 3.8
// reads the server lines from that file and refuses other keys in it, and server lines
// in zoo.cfg beside it.
func TestDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	dynamic := filepath.Join(dir, "zoo.cfg.dynamic.100000000")
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("zoo.cfg.dynamic.100000000", "server.1=a:2888:3888;2181\nserver.2=b:2888:3888;2181\nserver.3=c:2888:3888:observer;2181\n")
	write("myid", "2\n")
	cfgPath := write("zoo.cfg", "tickTime=2000\ndataDir="+dir+"\ndynamicConfigFile="+dynamic+"\n")
	cfg, warnings, err := loadConfig(newStartCommand(), cfgPath, envOf(nil), &server.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Servers) != 3 || cfg.ServerID != 2 || cfg.Servers[1].PeerAddr != "b:2888" || !cfg.Servers[2].Observer {
		t.Fatalf("servers %+v, id %d", cfg.Servers, cfg.ServerID)
	}
	if strings.Contains(strings.Join(warnings, "\n"), "dynamicConfigFile") {
		t.Fatalf("warnings %q", warnings)
	}
	for name, c := range map[string]struct{ static, dynamic, want string }{
		"server line beside it": {"server.1=a:2888:3888\n", "server.1=a:2888:3888\n", "server.1"},
		"other key in it":       {"", "server.1=a:2888:3888\ntickTime=5\n", "tickTime"},
		"version in it":         {"", "server.1=a:2888:3888\nversion=100000000\n", "version"},
		"bad server line":       {"", "server.1=a:2888\n", "server.1"},
	} {
		write("zoo.cfg.dynamic.100000000", c.dynamic)
		path := write("zoo.cfg", c.static+"dataDir="+dir+"\ndynamicConfigFile="+dynamic+"\n")
		if _, _, err := loadConfig(newStartCommand(), path, envOf(nil), &server.Config{}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	path := write("zoo.cfg", "dataDir="+dir+"\ndynamicConfigFile="+filepath.Join(dir, "missing")+"\n")
	if _, _, err := loadConfig(newStartCommand(), path, envOf(nil), &server.Config{}, nil); err == nil || !strings.Contains(err.Error(), "dynamicConfigFile") {
		t.Errorf("missing file: %v", err)
	}
}

// Each boolean is read as ZooKeeper 3.8 reads that key: QuorumPeerConfig's own keys take
// "true" or "false" in any case and refuse anything else (3.8.0 refuses
// reconfigEnabled=1, starts with reconfigEnabled=tRuE); a key ZooKeeper reads as a system
// property is true for "true" in any case and false for anything else, never an error
// (3.8.0 starts with extendedTypesEnabled=yes); and the AdminServer is off only for
// admin.enableServer=false exactly (3.8.0 serves it with "yes"). zkraft took Go's
// strconv.ParseBool for all of them.
func TestBooleansAsZooKeeperReadsThem(t *testing.T) {
	for _, c := range []struct {
		line string
		got  func(server.Config) bool
		want bool
	}{
		{"reconfigEnabled=tRuE", func(c server.Config) bool { return c.ReconfigEnabled }, true},
		{"extendedTypesEnabled=yes", func(c server.Config) bool { return c.ExtendedTypes }, false},
		{"zookeeper.enforceQuota=TRUE", func(c server.Config) bool { return c.EnforceQuota }, true},
		{"enforce.auth.enabled=1", func(c server.Config) bool { return c.EnforceAuth.Enabled }, false},
		{"ssl.quorum.hostnameVerification=no", func(c server.Config) bool { return c.QuorumSSL.HostnameVerification }, false},
		{"ssl.quorum.crl=yes", func(c server.Config) bool { return true }, true},
		{"admin.enableServer=yes", func(c server.Config) bool { return c.AdminEnabled }, true},
		{"admin.enableServer=FALSE", func(c server.Config) bool { return c.AdminEnabled }, true},
		{"admin.enableServer=false", func(c server.Config) bool { return c.AdminEnabled }, false},
		{"zookeeper.admin.restore.enabled=False", func(c server.Config) bool { return c.AdminAuth.RestoreEnabled }, false},
		{"admin.restore.enabled=no", func(c server.Config) bool { return c.AdminAuth.RestoreEnabled }, false},
		{"admin.restore.enabled=TRUE", func(c server.Config) bool { return c.AdminAuth.RestoreEnabled }, true},
	} {
		if cfg, _, err := readLine(c.line); err != nil || c.got(cfg) != c.want {
			t.Errorf("%s: read as %v (%v)", c.line, !c.want, err)
		}
	}
	mustRefuse(t, "reconfigEnabled=1", "sslQuorum=yes", "portUnification=on")
}

// readLine reads one zoo.cfg line over the defaults, as the zkraft command does (the
// AdminServer on).
func readLine(line string) (server.Config, []string, error) {
	cfg := server.DefaultConfig()
	cfg.AdminEnabled = true
	warnings, err := parseZooCfg(strings.NewReader(line+"\n"), &cfg)
	return cfg, warnings, err
}

// mustRefuse checks that each line stops the start with an error naming its key.
func mustRefuse(t *testing.T, lines ...string) {
	t.Helper()
	for _, line := range lines {
		key, _, _ := strings.Cut(line, "=")
		if _, _, err := readLine(line); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v", line, err)
		}
	}
}

// Values ZooKeeper 3.8 corrects instead of refusing start zkraft alike, with a warning:
// autopurge.snapRetainCount under 3 is 3 (QuorumPeerConfig), snapCount that is not a
// number keeps the default and under 2 is 2 (ZooKeeperServer.getSnapCount reads it with
// Integer.getInteger), and a negative maxClientCnxns limits nothing. zkraft refused the
// first three and maxClientCnxns=-1; the real 3.8.0 serves with each.
func TestCountsZooKeeperCorrects(t *testing.T) {
	for _, c := range []struct {
		line string
		got  func(server.Config) int
		want int
		warn bool
	}{
		{"autopurge.snapRetainCount=0", func(c server.Config) int { return c.SnapRetainCount }, 3, true},
		{"autopurge.snapRetainCount=5", func(c server.Config) int { return c.SnapRetainCount }, 5, false},
		{"snapCount=abc", func(c server.Config) int { return int(c.SnapCount) }, 100000, true},
		{"snapCount=0", func(c server.Config) int { return int(c.SnapCount) }, 2, true},
		{"maxClientCnxns=-1", func(c server.Config) int { return c.MaxClientCnxns }, 0, false},
	} {
		cfg, warnings, err := readLine(c.line)
		if err == nil {
			err = cfg.Validate()
		}
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		key, _, _ := strings.Cut(c.line, "=")
		if c.got(cfg) != c.want || strings.Contains(strings.Join(warnings, "\n"), key) != c.warn {
			t.Errorf("%s: read as %d, warnings %q", c.line, c.got(cfg), warnings)
		}
	}
	mustRefuse(t, "clientPort=4294969477") // beyond a Java int
}

// Keys ZooKeeper's QuorumPeerConfig parses and zkraft ignores are still checked as
// ZooKeeper parses them: 3.8.0 refuses clientPortListenBacklog=abc,
// autopurge.purgeInterval=abc, standaloneEnabled=yes, electionAlg=1 and
// localSessionsEnabled=yes, which zkraft took with a warning (or none). Hierarchical
// quorums (group.N, weight.N) and required SASL between members are refused: zkraft
// would count votes, or check members, otherwise than the operator meant.
func TestIgnoredKeysCheckedAsZooKeeperDoes(t *testing.T) {
	mustRefuse(t, "clientPortListenBacklog=abc", "autopurge.purgeInterval=abc", "standaloneEnabled=yes",
		"electionAlg=1", "localSessionsEnabled=yes", "peerType=boss", "quorum.auth.serverRequireSasl=true",
		"group.1=1:2:3", "weight.1=2")
	for _, line := range []string{"clientPortListenBacklog=100", "autopurge.purgeInterval=24", "standaloneEnabled=false",
		"electionAlg=3", "quorumListenOnAllIPs=TRUE", "peerType=Observer", "quorum.auth.serverRequireSasl=false"} {
		key, _, _ := strings.Cut(line, "=")
		if _, warnings, err := readLine(line); err != nil || !strings.Contains(strings.Join(warnings, "\n"), key+" is ignored") {
			t.Errorf("%s: %v, warnings %q", line, err, warnings)
		}
	}
}

// enforce.auth.schemes is split as ZooKeeper's AuthenticationHelper splits it (Java's
// String.split drops trailing empty fields): 3.8.0 starts with "digest," and zkraft
// refused it ("authentication scheme  is not available"); an empty scheme inside the
// list is refused by both.
func TestEnforceAuthSchemesTrailingComma(t *testing.T) {
	cfg, _, err := readLine("enforce.auth.enabled=true\nenforce.auth.schemes=digest, ip,")
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil || strings.Join(cfg.EnforceAuth.Schemes, ",") != "digest,ip" {
		t.Fatalf("schemes %q: %v", cfg.EnforceAuth.Schemes, err)
	}
	cfg, _, _ = readLine("enforce.auth.enabled=true\nenforce.auth.schemes=digest,,ip")
	if err := cfg.Validate(); err == nil {
		t.Fatalf("an empty scheme inside the list is taken: %q", cfg.EnforceAuth.Schemes)
	}
}

// ZooKeeper's own metrics providers (DefaultMetricsProvider, its default, and
// NullMetricsProvider) may be named in metricsProvider.className: 3.8.0 starts with
// either, and serves no metrics over HTTP whatever metricsProvider.httpPort says. zkraft
// refused both ("zkraft serves Prometheus metrics only").
func TestZooKeeperOwnMetricsProviders(t *testing.T) {
	for _, class := range []string{"org.apache.zookeeper.metrics.impl.DefaultMetricsProvider", "org.apache.zookeeper.metrics.impl.NullMetricsProvider"} {
		cfg, warnings, err := readLine("metricsProvider.httpPort=7000\nmetricsProvider.className=" + class)
		if err != nil || cfg.MetricsPort != 0 || !strings.Contains(strings.Join(warnings, "\n"), "httpPort is ignored") {
			t.Errorf("%s: %v, metrics port %d, warnings %q", class, err, cfg.MetricsPort, warnings)
		}
	}
	if cfg, _, err := readLine("metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider\nmetricsProvider.httpPort=7000"); err != nil || cfg.MetricsPort != 7000 {
		t.Errorf("Prometheus: %v, metrics port %d", err, cfg.MetricsPort)
	}
	mustRefuse(t, "metricsProvider.className=com.example.OtherProvider")
}
