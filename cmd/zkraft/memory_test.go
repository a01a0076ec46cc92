package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/server"
)

// files is a read function over a fixed set of files.
func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if v, ok := m[p]; ok {
			return []byte(v), nil
		}
		return nil, os.ErrNotExist
	}
}

func TestParseBytes(t *testing.T) {
	for v, want := range map[string]int64{"0": 0, "1048576": 1 << 20, "64k": 64 << 10, "512m": 512 << 20,
		"2G": 2 << 30, "1t": 1 << 40, " 3g ": 3 << 30} {
		if n, err := parseBytes(v); err != nil || n != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", v, n, err, want)
		}
	}
	for _, v := range []string{"", "k", "lots", "-1", "1.5g", "1gb", "99999999999t"} {
		if n, err := parseBytes(v); err == nil {
			t.Errorf("parseBytes(%q) = %d, want an error", v, n)
		}
	}
}

// The heap size is read as zkServer.sh passes it to the JVM: zkEnv.sh's
// -Xmx${ZK_SERVER_HEAP}m, then SERVER_JVMFLAGS, then JVMFLAGS; the last one wins.
func TestJVMMaxHeap(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int64
		from string
	}{
		{nil, 0, ""},
		{map[string]string{"JVMFLAGS": "-Xms2g -Dzookeeper.enforceQuota=true"}, 0, ""},
		{map[string]string{"ZK_SERVER_HEAP": "1000"}, 1000 << 20, "ZK_SERVER_HEAP"},
		{map[string]string{"SERVER_JVMFLAGS": "-Xmx2g"}, 2 << 30, "-Xmx in SERVER_JVMFLAGS"},
		{map[string]string{"ZK_SERVER_HEAP": "1000", "SERVER_JVMFLAGS": "-Xmx2g -Xmx3G", "JVMFLAGS": "-Xms1g -Xmx768m -Dreadonlymode.enabled=true"}, 768 << 20, "-Xmx in JVMFLAGS"},
		{map[string]string{"JVMFLAGS": "-XX:MaxHeapSize=1073741824"}, 1 << 30, "-Xmx in JVMFLAGS"},
	} {
		n, from, err := jvmMaxHeap(envOf(c.env))
		if err != nil || n != c.want || from != c.from {
			t.Errorf("%v: %d from %q, %v; want %d from %q", c.env, n, from, err, c.want, c.from)
		}
	}
	for _, env := range []map[string]string{{"JVMFLAGS": "-Xmxlots"}, {"SERVER_JVMFLAGS": "-Xmx"}, {"JVMFLAGS": "-Xmx0"}, {"ZK_SERVER_HEAP": "1g"}} {
		if n, _, err := jvmMaxHeap(envOf(env)); err == nil {
			t.Errorf("%v: %d, want an error", env, n)
		}
	}
}

// The first source found wins: zoo.cfg's memoryLimit, the JVM's heap size, the
// container's limit; a ceiling above the container's limit is lowered to it.
func TestMemoryCeilingPrecedence(t *testing.T) {
	cgroup2 := files(map[string]string{"/sys/fs/cgroup/memory.max": "4294967296\n"})
	cgroup1 := files(map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "300\n"})
	xmx := envOf(map[string]string{"JVMFLAGS": "-Xmx2g"})
	for i, c := range []struct {
		memoryLimit int64
		env         func(string) string
		read        func(string) ([]byte, error)
		want        int64
		from        string
	}{
		{1 << 30, xmx, cgroup2, 1 << 30, "memoryLimit"},
		{0, xmx, cgroup2, 2 << 30, "-Xmx in JVMFLAGS"},
		{0, envOf(nil), cgroup2, 4 << 30, "the container's memory limit"},
		{0, envOf(nil), cgroup1, 300, "the container's memory limit"},
		{0, envOf(nil), files(map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}), 0, ""},
		{0, xmx, files(nil), 2 << 30, "-Xmx in JVMFLAGS"},
		{8 << 30, xmx, cgroup2, 4 << 30, "the container's memory limit (memoryLimit, 8589934592 bytes (8192 MiB), is above it)"},
	} {
		cfg := server.DefaultConfig()
		cfg.MemoryLimit = c.memoryLimit
		n, from, err := memoryCeiling(&cfg, c.env, c.read)
		if err != nil || n != c.want || from != c.from {
			t.Errorf("case %d: %d from %q, %v; want %d from %q", i, n, from, err, c.want, c.from)
		}
	}
	cfg := server.DefaultConfig()
	if _, _, err := memoryCeiling(&cfg, envOf(map[string]string{"JVMFLAGS": "-Xmx2q"}), cgroup2); err == nil {
		t.Error("a bad -Xmx was taken")
	}
}

// The tree lives outside the Go heap, so Go's limit is 90% of the ceiling less the tree's
// cap; tree and heap together stay within 90% of the ceiling.
func TestSplitMemory(t *testing.T) {
	const L = 3 << 30
	cfg := server.DefaultConfig()
	s := splitMemory(&cfg, L, "x", "", true)
	if s.treeCap != 1<<30 || s.goLimit != L/10*9-1<<30 || s.floored {
		t.Fatalf("3 GiB off the heap: %+v; want a tree cap of 1 GiB and Go limit %d", s, L/10*9-1<<30)
	}
	if s.treeCap+s.goLimit > L/10*9 {
		t.Fatalf("tree cap and Go limit %d overshoot 90%% of the ceiling", s.treeCap+s.goLimit)
	}
	if s := splitMemory(&cfg, L, "x", "", false); s.treeCap != 1<<30 || s.goLimit != L/10*9 {
		t.Fatalf("3 GiB, tree on the heap: %+v; want Go limit %d", s, L/10*9)
	}
	cfg.TreeMemoryLimit = 512 << 20
	if s := splitMemory(&cfg, L, "x", "", true); s.treeCap != 512<<20 || s.goLimit != L/10*9-512<<20 || !s.treeSet {
		t.Fatalf("configured tree cap: %+v", s)
	}
	if s := splitMemory(&cfg, L, "x", "2GiB", true); s.goLimit != 0 || s.treeCap != 512<<20 {
		t.Fatalf("GOMEMLIMIT set: %+v; want Go's limit left alone", s)
	}
	cfg.TreeMemoryLimit = 0
	if s := splitMemory(&cfg, 90<<20, "x", "", true); s.goLimit != goLimitFloor || !s.floored || s.treeCap != 30<<20 {
		t.Fatalf("a 90 MiB ceiling: %+v; want Go's limit at its floor", s)
	}
}

// memoryDefaults sets the tree's cap and Go's memory limit, and its line names the source.
func TestMemoryDefaults(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	cfg := server.DefaultConfig()
	notes, err := memoryDefaults(&cfg, envOf(map[string]string{"SERVER_JVMFLAGS": "-Xmx3g"}), files(nil))
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "from -Xmx in SERVER_JVMFLAGS") {
		t.Fatalf("notes %q, %v", notes, err)
	}
	want := splitMemory(&server.Config{}, 3<<30, "", "", datatree.OffHeap)
	if cfg.TreeMemoryLimit != 1<<30 || debug.SetMemoryLimit(-1) != want.goLimit {
		t.Fatalf("tree cap %d, Go limit %d; want 1 GiB and %d", cfg.TreeMemoryLimit, debug.SetMemoryLimit(-1), want.goLimit)
	}
	debug.SetMemoryLimit(prev)
	// GOMEMLIMIT leaves Go's limit alone; a configured cap stays.
	cfg = server.DefaultConfig()
	cfg.TreeMemoryLimit = 7
	if _, err := memoryDefaults(&cfg, envOf(map[string]string{"GOMEMLIMIT": "1GiB"}), files(map[string]string{"/sys/fs/cgroup/memory.max": "3000\n"})); err != nil || cfg.TreeMemoryLimit != 7 {
		t.Fatalf("a configured cap was replaced: %d, %v", cfg.TreeMemoryLimit, err)
	}
	if debug.SetMemoryLimit(-1) != prev {
		t.Fatal("Go's limit was set although GOMEMLIMIT was")
	}
	cfg = server.DefaultConfig()
	if notes, err := memoryDefaults(&cfg, envOf(nil), files(map[string]string{"/sys/fs/cgroup/memory.max": "max\n"})); err != nil || cfg.TreeMemoryLimit != 0 || len(notes) != 0 {
		t.Fatalf("no ceiling: cap %d, notes %q, %v", cfg.TreeMemoryLimit, notes, err)
	}
	if _, err := memoryDefaults(&cfg, envOf(map[string]string{"JVMFLAGS": "-Xmxbig"}), files(nil)); err == nil {
		t.Fatal("a bad -Xmx was not an error")
	}
}

// memoryLimit comes from zoo.cfg or ZOO_CFG_EXTRA; -Xmx in JVMFLAGS is no warning.
func TestMemoryLimitSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zoo.cfg")
	os.WriteFile(path, []byte("memoryLimit=2g\n"), 0o644)
	var flags server.Config
	cfg, warnings, err := loadConfig(newStartCommand(), path, envOf(map[string]string{"JVMFLAGS": "-Xmx1g"}), &flags, nil)
	if err != nil || len(warnings) > 0 || cfg.MemoryLimit != 2<<30 {
		t.Fatalf("memoryLimit=2g: %d, warnings %q, %v", cfg.MemoryLimit, warnings, err)
	}
	cfg, _, err = loadConfig(newStartCommand(), "", envOf(map[string]string{"ZOO_CFG_EXTRA": "memoryLimit=512m"}), &flags, nil)
	if err != nil || cfg.MemoryLimit != 512<<20 {
		t.Fatalf("ZOO_CFG_EXTRA memoryLimit=512m: %d, %v", cfg.MemoryLimit, err)
	}
	c := server.DefaultConfig()
	if _, err := parseZooCfg(strings.NewReader("memoryLimit=plenty\n"), &c); err == nil {
		t.Fatal("memoryLimit=plenty accepted")
	}
}
