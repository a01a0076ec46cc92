package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

// The request throttle is set as ZooKeeper's users set it: system properties in
// JVMFLAGS, or zoo.cfg keys with or without the zookeeper. prefix.
func TestRequestThrottleSettings(t *testing.T) {
	load := func(env map[string]string, cfgText string) server.Config {
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
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if v, ok := m[p]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		}
	}
	// A container's limit (cgroup v2, then v1) sets the cap to a third of it unless
	// zoo.cfg set one; no limit ("max") sets nothing.
	c = server.DefaultConfig()
	memoryDefaults(&c, envOf(map[string]string{"GOMEMLIMIT": "1GiB"}), files(map[string]string{"/sys/fs/cgroup/memory.max": "3221225472\n"}))
	if c.TreeMemoryLimit != 1<<30 {
		t.Fatalf("cgroup v2 limit of 3 GiB: cap %d, want 1 GiB", c.TreeMemoryLimit)
	}
	c = server.DefaultConfig()
	memoryDefaults(&c, envOf(map[string]string{"GOMEMLIMIT": "1GiB"}), files(map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "300\n"}))
	if c.TreeMemoryLimit != 100 {
		t.Fatalf("cgroup v1 limit of 300 B: cap %d, want 100", c.TreeMemoryLimit)
	}
	c = server.DefaultConfig()
	c.TreeMemoryLimit = 7
	memoryDefaults(&c, envOf(map[string]string{"GOMEMLIMIT": "1GiB"}), files(map[string]string{"/sys/fs/cgroup/memory.max": "3000\n"}))
	if c.TreeMemoryLimit != 7 {
		t.Fatalf("a configured cap was replaced: %d", c.TreeMemoryLimit)
	}
	c = server.DefaultConfig()
	if notes := memoryDefaults(&c, envOf(nil), files(map[string]string{"/sys/fs/cgroup/memory.max": "max\n"})); c.TreeMemoryLimit != 0 || len(notes) != 0 {
		t.Fatalf("no container limit: cap %d, notes %q", c.TreeMemoryLimit, notes)
	}
}
