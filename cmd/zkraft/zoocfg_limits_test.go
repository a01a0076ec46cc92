package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

// The connection throttle and the large request bound are set as ZooKeeper's users set
// them: system properties in JVMFLAGS, or zoo.cfg keys with or without the zookeeper.
// prefix; bad values are treated as ZooKeeper treats them.
func TestLimitSettings(t *testing.T) {
	cfg := loadQuietly(t, nil, "")
	if cfg.ConnThrottle != server.DefaultConnThrottle() || cfg.LargeRequests != server.DefaultLargeRequests() {
		t.Fatalf("defaults %+v %+v", cfg.ConnThrottle, cfg.LargeRequests)
	}
	cfg = loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.connection_throttle_tokens=50 -Dzookeeper.largeRequestThreshold=2048"},
		"zookeeper.connection_throttle_fill_time=10\nconnection_throttle_fill_count=5\nconnection_throttle_freeze_time=100\n"+
			"connection_throttle_drop_increase=0.5\nconnection_throttle_drop_decrease=0.25\nconnection_throttle_decrease_ratio=0.1\n"+
			"connection_throttle_weight_enabled=TRUE\nconnection_throttle_global_session_weight=4\n"+
			"connection_throttle_local_session_weight=2\nconnection_throttle_renew_session_weight=3\nlargeRequestMaxBytes=65536\n")
	want := server.ConnThrottleConfig{Tokens: 50, FillTime: 10, FillCount: 5, FreezeTime: 100, DropIncrease: 0.5, DropDecrease: 0.25,
		DecreaseRatio: 0.1, WeightEnabled: true, GlobalWeight: 4, LocalWeight: 2, RenewWeight: 3}
	if cfg.ConnThrottle != want {
		t.Fatalf("connection throttle %+v, want %+v", cfg.ConnThrottle, want)
	}
	if want := (server.LargeRequestConfig{Threshold: 2048, MaxBytes: 65536}); cfg.LargeRequests != want {
		t.Fatalf("large requests %+v, want %+v", cfg.LargeRequests, want)
	}
	// Integer.getInteger leaves the default for a value that is not a number, and
	// ZooKeeperServer refuses a bound that is not positive and a threshold of 0 or
	// below -1: each is a warning, the setting unchanged (the threshold off).
	for text, check := range map[string]func(server.Config) bool{
		"largeRequestMaxBytes=0":          func(c server.Config) bool { return c.LargeRequests.MaxBytes == 100<<20 },
		"largeRequestMaxBytes=lots":       func(c server.Config) bool { return c.LargeRequests.MaxBytes == 100<<20 },
		"largeRequestThreshold=0":         func(c server.Config) bool { return c.LargeRequests.Threshold == -1 },
		"largeRequestThreshold=-5":        func(c server.Config) bool { return c.LargeRequests.Threshold == -1 },
		"connection_throttle_tokens=many": func(c server.Config) bool { return c.ConnThrottle.Tokens == 0 },
	} {
		c := server.DefaultConfig()
		warnings, err := parseZooCfg(strings.NewReader(text+"\n"), &c)
		if err != nil || len(warnings) != 1 || !check(c) {
			t.Fatalf("%s: warnings %q, err %v, config %+v %+v", text, warnings, err, c.LargeRequests, c.ConnThrottle)
		}
	}
	// Double.parseDouble throws in BlueThrottle's static init: ZooKeeper does not start.
	c := server.DefaultConfig()
	if _, err := parseZooCfg(strings.NewReader("connection_throttle_drop_increase=high\n"), &c); err == nil {
		t.Fatal("connection_throttle_drop_increase=high accepted")
	}
}

// leaderServes is off only for exactly "no", as ZooKeeper's Leader reads it, from
// zoo.cfg or JVMFLAGS.
func TestLeaderServesSetting(t *testing.T) {
	for text, want := range map[string]bool{"": false, "leaderServes=no\n": true, "leaderServes=NO\n": false,
		"zookeeper.leaderServes=no\n": true, "leaderServes=yes\n": false} {
		if got := loadQuietly(t, nil, text).LeaderServesNo; got != want {
			t.Fatalf("%q: LeaderServesNo %v", text, got)
		}
	}
	if !loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.leaderServes=no"}, "").LeaderServesNo {
		t.Fatal("-Dzookeeper.leaderServes=no ignored")
	}
}

func TestDataDirAndSessionlessSettings(t *testing.T) {
	cfg := loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.datadir.autocreate=false -Dzookeeper.nio.sessionlessCnxnTimeout=2500"}, "")
	if !cfg.NoDataDirAutocreate || cfg.SessionlessTimeout != 2500*time.Millisecond {
		t.Fatalf("%v %v", cfg.NoDataDirAutocreate, cfg.SessionlessTimeout)
	}
	for _, text := range []string{"db.autocreate=false\n", "zookeeper.db.autocreate=yes\n"} {
		if !loadQuietly(t, nil, text).NoDBAutocreate {
			t.Fatalf("%q: the empty store trusted", text)
		}
	}
	if !loadQuietly(t, map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.db.autocreate=false"}, "").NoDBAutocreate {
		t.Fatal("-Dzookeeper.db.autocreate=false ignored")
	}
	if cfg := loadQuietly(t, nil, "datadir.autocreate=TRUE\ndb.autocreate=True\n"); cfg.NoDataDirAutocreate || cfg.NoDBAutocreate || cfg.SessionlessTimeout != 10*time.Second {
		t.Fatalf("defaults: %v %v %v", cfg.NoDataDirAutocreate, cfg.NoDBAutocreate, cfg.SessionlessTimeout)
	}
}

func TestEnsembleAuthSettings(t *testing.T) {
	cfg := loadQuietly(t, map[string]string{"JVMFLAGS": "-Dzookeeper.ensembleAuthName=a,b"},
		"authProvider.3=org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider\n")
	if !cfg.EnsembleProvider || strings.Join(cfg.EnsembleNames, "|") != "a|b" {
		t.Fatalf("%v %q", cfg.EnsembleProvider, cfg.EnsembleNames)
	}
	if cfg := loadQuietly(t, nil, "ensembleAuthName= x , y\n"); strings.Join(cfg.EnsembleNames, "|") != "x|y" || cfg.EnsembleProvider {
		t.Fatalf("%v %q", cfg.EnsembleProvider, cfg.EnsembleNames)
	}
}

func TestLetAnySaslUserSetting(t *testing.T) {
	if got := loadQuietly(t, map[string]string{"SERVER_JVMFLAGS": "-Dzookeeper.letAnySaslUserDoX=all"}, "").SASL.AnyUser; got != "all" {
		t.Fatalf("%q", got)
	}
}

func TestContainerSettings(t *testing.T) {
	cfg := loadQuietly(t, map[string]string{"JVMFLAGS": "-Dznode.container.maxNeverUsedIntervalMs=90000 -Dznode.container.maxPerMinute=60"}, "")
	if cfg.ContainerMaxNeverUsed != 90*time.Second || cfg.ContainerMaxPerMinute != 60 {
		t.Fatalf("%v %d", cfg.ContainerMaxNeverUsed, cfg.ContainerMaxPerMinute)
	}
	if cfg := loadQuietly(t, nil, ""); cfg.ContainerMaxNeverUsed != 0 || cfg.ContainerMaxPerMinute != 10000 {
		t.Fatalf("defaults %v %d", cfg.ContainerMaxNeverUsed, cfg.ContainerMaxPerMinute)
	}
}
