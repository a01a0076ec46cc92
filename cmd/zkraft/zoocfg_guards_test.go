package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

// loadQuietly loads a zoo.cfg of cfgText with the environment env as the start command
// does, and fails the test on an error or a warning.
func loadQuietly(t *testing.T, env map[string]string, cfgText string) server.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	os.WriteFile(path, []byte(cfgText), 0o644)
	var flags server.Config
	cfg, warnings, err := loadConfig(newStartCommand(), path, envOf(env), &flags, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) > 0 {
		t.Fatalf("warnings %q", warnings)
	}
	return cfg
}

// The request throttle is set as ZooKeeper's users set it: system properties in
// JVMFLAGS, or zoo.cfg keys with or without the zookeeper. prefix.
func TestRequestThrottleSettings(t *testing.T) {
	load := func(env map[string]string, cfgText string) server.Config { return loadQuietly(t, env, cfgText) }
	if got, want := load(nil, "").Throttle, server.DefaultThrottle(); got != want {
		t.Fatalf("default throttle %+v, want ZooKeeper's %+v", got, want)
	}
	cfg := load(map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.request_throttle_max_requests=7 -Dzookeeper.throttled_op_wait_time=40"},
		"request_throttle_stall_time=5\nzookeeper.request_throttle_drop_stale=false\nrequest_stale_latency_check=true\n")
	want := server.ThrottleConfig{MaxRequests: 7, StallTime: 5 * time.Millisecond, DropStale: false,
		StaleConnectionCheck: true, StaleLatencyCheck: true, ThrottledOpWaitTime: 40 * time.Millisecond}
	if cfg.Throttle != want {
		t.Fatalf("throttle %+v, want %+v", cfg.Throttle, want)
	}
	bad := load(map[string]string{"JVMFLAGS": "-Dzookeeper.request_throttle_max_requests=-1"}, "")
	if err := bad.Validate(); err == nil {
		t.Fatal("a negative request_throttle_max_requests was accepted")
	}
}

func TestTreeMemoryLimitSettings(t *testing.T) {
	for v, want := range map[string]int64{"1048576": 1 << 20, "512m": 512 << 20, "2G": 2 << 30, "64k": 64 << 10} {
		c := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader("treeMemoryLimit="+v+"\n"), &c); err != nil || c.TreeMemoryLimit != want {
			t.Fatalf("treeMemoryLimit=%s: %d, %v; want %d", v, c.TreeMemoryLimit, err, want)
		}
	}
	c := server.DefaultConfig()
	if _, err := parseZooCfg(strings.NewReader("treeMemoryLimit=lots\n"), &c); err == nil {
		t.Fatal("treeMemoryLimit=lots accepted")
	}
}

// The AdminServer's HTTPS keys are read as ZooKeeper reads them: zoo.cfg keys with or
// without the zookeeper. prefix, or system properties in JVMFLAGS, "true" in any case
// on and anything else off; none of them is left as an ignored key.
func TestAdminHTTPSSettings(t *testing.T) {
	load := func(env map[string]string, cfgText string) server.AdminTLS {
		return loadQuietly(t, env, cfgText).AdminTLS
	}
	if got := load(nil, ""); got != (server.AdminTLS{}) {
		t.Fatalf("default %+v, want HTTP only", got)
	}
	for _, c := range []struct {
		env  map[string]string
		cfg  string
		want server.AdminTLS
	}{
		{nil, "admin.forceHttps=true\n", server.AdminTLS{ForceHTTPS: true}},
		{nil, "zookeeper.admin.portUnification=TRUE\nadmin.needClientAuth=true\n", server.AdminTLS{PortUnification: true, NeedClientAuth: true}},
		{map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.admin.forceHttps=true -Dzookeeper.admin.needClientAuth=yes"}, "", server.AdminTLS{ForceHTTPS: true}},
		{nil, "admin.forceHttps=1\n", server.AdminTLS{}},
	} {
		if got := load(c.env, c.cfg); got != c.want {
			t.Errorf("%v %q: %+v, want %+v", c.env, c.cfg, got, c.want)
		}
	}
}

// IPAuthenticationProvider.usexforwardedfor is a system property: zoo.cfg with or
// without its prefix, or JVMFLAGS; "true" in any case is on.
func TestUseXForwardedForSetting(t *testing.T) {
	if loadQuietly(t, nil, "").AdminAuth.UseXForwardedFor {
		t.Fatal("X-Forwarded-For is used by default")
	}
	for _, c := range []struct {
		env  map[string]string
		cfg  string
		want bool
	}{
		{nil, "IPAuthenticationProvider.usexforwardedfor=true\n", true},
		{nil, "zookeeper.IPAuthenticationProvider.usexforwardedfor=TRUE\n", true},
		{map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.IPAuthenticationProvider.usexforwardedfor=true"}, "", true},
		{nil, "IPAuthenticationProvider.usexforwardedfor=yes\n", false},
	} {
		if got := loadQuietly(t, c.env, c.cfg).AdminAuth.UseXForwardedFor; got != c.want {
			t.Errorf("%v %q: %v, want %v", c.env, c.cfg, got, c.want)
		}
	}
}

// audit.enable is read as ZooKeeper reads it, in zoo.cfg or JVMFLAGS; audit.impl.class
// may name ZooKeeper's own loggers only.
func TestAuditSettings(t *testing.T) {
	if loadQuietly(t, nil, "").Audit {
		t.Fatal("the audit log is on by default")
	}
	for _, c := range []struct {
		env map[string]string
		cfg string
	}{
		{nil, "audit.enable=true\n"},
		{nil, "zookeeper.audit.enable=TRUE\nzookeeper.audit.impl.class=org.apache.zookeeper.audit.Slf4jAuditLogger\n"},
		{map[string]string{"JVMFLAGS": "-Dzookeeper.audit.enable=true"}, ""},
	} {
		if !loadQuietly(t, c.env, c.cfg).Audit {
			t.Errorf("%v %q: the audit log is off", c.env, c.cfg)
		}
	}
	c := server.DefaultConfig()
	if _, err := parseZooCfg(strings.NewReader("audit.impl.class=com.example.MyAuditLogger\n"), &c); err == nil {
		t.Fatal("an audit logger class zkraft cannot load was accepted")
	}
}

// snapSizeLimitInKb is read as ZooKeeper's Long.getLong reads it: kilobytes, off when not
// above 0, the default (4 GB) kept with a warning when it is not a number.
func TestSnapSizeLimitSettings(t *testing.T) {
	if got := loadQuietly(t, nil, "").SnapSizeLimit; got != 4<<30 {
		t.Fatalf("default %d, want ZooKeeper's 4 GB", got)
	}
	for v, want := range map[string]int64{"1024": 1 << 20, "0": 0, "-1": 0} {
		if got := loadQuietly(t, nil, "snapSizeLimitInKb="+v+"\n").SnapSizeLimit; got != want {
			t.Errorf("snapSizeLimitInKb=%s: %d, want %d", v, got, want)
		}
	}
	if got := loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.snapSizeLimitInKb=2048"}, "").SnapSizeLimit; got != 2<<20 {
		t.Errorf("-Dzookeeper.snapSizeLimitInKb=2048: %d", got)
	}
	c := server.DefaultConfig()
	warnings, err := parseZooCfg(strings.NewReader("snapSizeLimitInKb=lots\n"), &c)
	if err != nil || len(warnings) != 1 || c.SnapSizeLimit != 4<<30 {
		t.Fatalf("snapSizeLimitInKb=lots: %d, %q, %v", c.SnapSizeLimit, warnings, err)
	}
}

// admin.idleTimeout is milliseconds, in zoo.cfg or JVMFLAGS; admin.httpVersion 11 is
// taken without a warning, any other with one.
func TestAdminIdleTimeoutAndHTTPVersion(t *testing.T) {
	if got := loadQuietly(t, nil, "admin.idleTimeout=1500\nadmin.httpVersion=11\n").AdminIdleTimeout; got != 1500*time.Millisecond {
		t.Errorf("admin.idleTimeout=1500: %v", got)
	}
	if got := loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.admin.idleTimeout=250"}, "").AdminIdleTimeout; got != 250*time.Millisecond {
		t.Errorf("-Dzookeeper.admin.idleTimeout=250: %v", got)
	}
	c := server.DefaultConfig()
	if warnings, err := parseZooCfg(strings.NewReader("admin.httpVersion=20\n"), &c); err != nil || len(warnings) != 1 {
		t.Errorf("admin.httpVersion=20: %q, %v", warnings, err)
	}
}

// A setting of ZooKeeper's Java internals is taken in each of ZooKeeper's spellings with
// a warning that says why it has no effect, never as an unknown key.
func TestZooKeeperTuningKeysSayWhy(t *testing.T) {
	for _, k := range []string{"flushDelay", "zookeeper.globalOutstandingLimit", "commitLogCount", "learner.asyncSending"} {
		c := server.DefaultConfig()
		warnings, err := parseZooCfg(strings.NewReader(k+"=1\n"), &c)
		if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "is ignored: ") {
			t.Errorf("%s: %q, %v", k, warnings, err)
		}
	}
	var flags server.Config
	_, warnings, err := loadConfig(newStartCommand(), "", envOf(map[string]string{"JVMFLAGS": "-Dzookeeper.commitLogCount=50"}), &flags, nil)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "catches up from zkraft's log") {
		t.Errorf("-Dzookeeper.commitLogCount=50: %q, %v", warnings, err)
	}
}

// metricsProvider.exportJvmInfo is read as Boolean.parseBoolean reads it: only "true", in
// any case, keeps the JVM series (its default).
func TestExportJvmInfoSetting(t *testing.T) {
	for cfg, off := range map[string]bool{"": false, "metricsProvider.exportJvmInfo=TRUE\n": false,
		"metricsProvider.exportJvmInfo=false\n": true, "metricsProvider.exportJvmInfo=no\n": true} {
		if c := loadQuietly(t, nil, cfg); c.MetricsNoJVMInfo != off {
			t.Errorf("%q: MetricsNoJVMInfo %v", cfg, c.MetricsNoJVMInfo)
		}
	}
}

// zookeeper.skipACL and zookeeper.forceSync are taken in ZooKeeper's spellings, and only
// "yes" turns the checks off and only "no" the syncs, as ZooKeeperServer and FileTxnLog
// compare them.
func TestSkipACLAndForceSyncSettings(t *testing.T) {
	for _, tc := range []struct {
		env             map[string]string
		cfg             string
		skipACL, noSync bool
	}{
		{nil, "", false, false},
		{map[string]string{"JVMFLAGS": "-Dzookeeper.skipACL=yes -Dzookeeper.forceSync=no"}, "", true, true},
		{map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.skipACL=true -Dzookeeper.forceSync=false"}, "", false, false},
		{nil, "skipACL=yes\nforceSync=no\n", true, true},
		{nil, "zookeeper.skipACL=yes\nzookeeper.forceSync=no\n", true, true},
		{nil, "skipACL=Yes\nforceSync=No\n", false, false},
	} {
		if c := loadQuietly(t, tc.env, tc.cfg); c.SkipACL != tc.skipACL || c.NoForceSync != tc.noSync {
			t.Errorf("%v %q: SkipACL %v, NoForceSync %v; want %v, %v", tc.env, tc.cfg, c.SkipACL, c.NoForceSync, tc.skipACL, tc.noSync)
		}
	}
}

// Netty's TLS guards are taken as ZooKeeper takes them: system properties in JVMFLAGS or
// zoo.cfg keys; the limit as Integer.getInteger (a value that is not a number leaves it
// off), the early drop as Boolean.getBoolean; serverCnxnFactory names the factory.
func TestTLSGuardSettings(t *testing.T) {
	load := func(env map[string]string, cfgText string) server.Config { return loadQuietly(t, env, cfgText) }
	if c := load(nil, ""); c.TLSHandshakeLimit != -1 || c.EarlyDropSecureHandshakes || c.NettyFactory {
		t.Fatalf("defaults: limit %d, early drop %v, netty %v", c.TLSHandshakeLimit, c.EarlyDropSecureHandshakes, c.NettyFactory)
	}
	c := load(map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.netty.server.outstandingHandshake.limit=5 " +
		"-Dzookeeper.serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory"},
		"netty.server.earlyDropSecureConnectionHandshakes=true\n")
	if c.TLSHandshakeLimit != 5 || !c.EarlyDropSecureHandshakes || !c.NettyFactory {
		t.Fatalf("limit %d, early drop %v, netty %v", c.TLSHandshakeLimit, c.EarlyDropSecureHandshakes, c.NettyFactory)
	}
	c = server.DefaultConfig()
	warnings, err := parseZooCfg(strings.NewReader("zookeeper.netty.server.outstandingHandshake.limit=many\n"), &c)
	if err != nil || c.TLSHandshakeLimit != -1 || len(warnings) != 1 || !strings.Contains(warnings[0], "stays -1") {
		t.Fatalf("a limit that is not a number: %d, %v, %q", c.TLSHandshakeLimit, err, warnings)
	}
}
