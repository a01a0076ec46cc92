package main

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/server"
)

// goLimitFloor is the least Go memory limit a ceiling sets: below it the collector would
// run almost without pause and the server would do little else.
const goLimitFloor = 64 << 20

// parseBytes reads a size: a number of bytes, or one with a k, m, g or t suffix (powers
// of 1024, as the JVM's -Xmx).
func parseBytes(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mul := int64(1)
	if i := len(s) - 1; i > 0 {
		if shift := strings.IndexByte("kmgt", s[i]); shift >= 0 {
			mul, s = 1<<(10*(shift+1)), s[:i]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mul {
		return 0, fmt.Errorf("not a size: %q", v)
	}
	return n * mul, nil
}

// cgroupMemoryLimit is the container's memory limit (cgroup v2's memory.max, else v1's
// memory.limit_in_bytes), or 0 when there is none.
func cgroupMemoryLimit(read func(string) ([]byte, error)) int64 {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := read(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		// "max", or v1's "no limit" (a page-rounded huge number).
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0
		}
		return n
	}
	return 0
}

// jvmMaxHeap is the JVM heap size ZooKeeper's scripts would start with: the last -Xmx (or
// -XX:MaxHeapSize=) of zkEnv.sh's "-Xmx${ZK_SERVER_HEAP}m" (when ZK_SERVER_HEAP is set;
// zkraft does not take the script's default of 1000), SERVER_JVMFLAGS and JVMFLAGS, in
// the order zkServer.sh hands them to the JVM. It names the variable it came from; 0
// when none is set.
func jvmMaxHeap(getenv func(string) string) (n int64, from string, err error) {
	if v := strings.TrimSpace(getenv("ZK_SERVER_HEAP")); v != "" {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb <= 0 || mb > 1<<40 {
			return 0, "", fmt.Errorf("ZK_SERVER_HEAP: %q is not a number of megabytes", v)
		}
		n, from = mb<<20, "ZK_SERVER_HEAP"
	}
	for _, env := range []string{"SERVER_JVMFLAGS", "JVMFLAGS"} {
		for _, f := range strings.Fields(getenv(env)) {
			size, ok := strings.CutPrefix(f, "-Xmx")
			if !ok {
				if size, ok = strings.CutPrefix(f, "-XX:MaxHeapSize="); !ok {
					continue
				}
			}
			if n, err = parseBytes(size); err != nil || n == 0 {
				return 0, "", fmt.Errorf("%s: %s is not a heap size", env, f)
			}
			from = "-Xmx in " + env
		}
	}
	return n, from, nil
}

// memoryCeiling is the whole process's memory ceiling and where it came from, the first
// found of: zoo.cfg's memoryLimit, the JVM's heap size (jvmMaxHeap), the container's
// memory limit; 0 when there is none. A ceiling above the container's limit is lowered
// to it: the kernel kills the process there whatever it was told.
func memoryCeiling(cfg *server.Config, getenv func(string) string, read func(string) ([]byte, error)) (int64, string, error) {
	n, from := cfg.MemoryLimit, "memoryLimit"
	if n <= 0 {
		var err error
		if n, from, err = jvmMaxHeap(getenv); err != nil {
			return 0, "", err
		}
	}
	container := cgroupMemoryLimit(read)
	switch {
	case container > 0 && n > container:
		return container, fmt.Sprintf("the container's memory limit (%s, %s, is above it)", from, mib(n)), nil
	case n > 0:
		return n, from, nil
	case container > 0:
		return container, "the container's memory limit", nil
	}
	return 0, "", nil
}

// memorySplit is what a ceiling sets: the tree's cap, and Go's memory limit (0: left to
// GOMEMLIMIT).
type memorySplit struct {
	ceiling  int64
	from     string
	treeCap  int64
	goLimit  int64
	treeSet  bool // treeMemoryLimit was configured
	floored  bool // goLimit is goLimitFloor, the ceiling being too small for the split
	envLimit string
	offHeap  bool // the tree lives outside the Go heap
}

// splitMemory divides a ceiling L: the tree's cap is L/3 unless treeMemoryLimit is set;
// Go's memory limit is 90% of L (the rest is for what neither counts: the kernel's buffers
// and page tables, the program's text, the heap's overshoot of a soft limit) less the
// tree's cap when the tree lives outside the Go heap, and never below goLimitFloor.
// GOMEMLIMIT, when set, leaves Go's limit alone.
func splitMemory(cfg *server.Config, ceiling int64, from, gomemlimit string, offHeap bool) memorySplit {
	s := memorySplit{ceiling: ceiling, from: from, treeCap: cfg.TreeMemoryLimit, treeSet: cfg.TreeMemoryLimit > 0, envLimit: gomemlimit, offHeap: offHeap}
	if !s.treeSet {
		s.treeCap = ceiling / 3
	}
	if gomemlimit != "" {
		return s
	}
	s.goLimit = ceiling / 10 * 9
	if offHeap {
		s.goLimit -= s.treeCap
	}
	if s.goLimit < goLimitFloor {
		s.goLimit, s.floored = goLimitFloor, true
	}
	return s
}

// String is the start-up log line: the ceiling, its source, and what it set.
func (s memorySplit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "memory ceiling %s from %s: ", mib(s.ceiling), s.from)
	if s.treeSet {
		fmt.Fprintf(&b, "tree cap %s as treeMemoryLimit sets it; ", mib(s.treeCap))
	} else {
		fmt.Fprintf(&b, "tree cap (treeMemoryLimit) %s, a third; ", mib(s.treeCap))
	}
	switch {
	case s.envLimit != "":
		fmt.Fprintf(&b, "Go memory limit left to GOMEMLIMIT=%s", s.envLimit)
	case s.floored:
		fmt.Fprintf(&b, "Go memory limit %s, its floor (the ceiling is too small for the tree's cap and the heap)", mib(s.goLimit))
	default:
		fmt.Fprintf(&b, "Go memory limit %s, 90%% of the ceiling", mib(s.goLimit))
		if s.offHeap {
			b.WriteString(" less the tree's cap (the tree lives outside the Go heap)")
		}
		b.WriteString("; GOMEMLIMIT overrides")
	}
	return b.String()
}

// mib writes a size as bytes with its MiB.
func mib(n int64) string { return fmt.Sprintf("%d bytes (%d MiB)", n, n>>20) }

// memoryDefaults applies the process's memory ceiling, if there is one: it sets the
// tree's cap in cfg and Go's memory limit (splitMemory) and returns the line to log.
// Without a ceiling it sets nothing, and Go's collector follows GOGC (and GOMEMLIMIT)
// alone.
func memoryDefaults(cfg *server.Config, getenv func(string) string, read func(string) ([]byte, error)) (notes []string, err error) {
	ceiling, from, err := memoryCeiling(cfg, getenv, read)
	if err != nil || ceiling == 0 {
		return nil, err
	}
	s := splitMemory(cfg, ceiling, from, getenv("GOMEMLIMIT"), datatree.OffHeap) // the tree outside the Go heap needs room beside it
	cfg.TreeMemoryLimit = s.treeCap
	if s.goLimit > 0 {
		debug.SetMemoryLimit(s.goLimit)
	}
	return []string{s.String()}, nil
}
