package main

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/server"
)

// parseBytes reads a size: a number of bytes, or one with a k, m or g suffix (powers of
// 1024, as the JVM's -Xmx).
func parseBytes(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "k"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "g"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
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

// memoryDefaults fits zkraft to a container's memory limit when the operator set
// nothing: the Go runtime's soft limit at 90% of it (unless GOMEMLIMIT is set), so the
// collector works harder before the kernel kills, and the tree's cap at a third of it
// (unless treeMemoryLimit is set), leaving room for the collector's headroom, a
// snapshot's copies, the log's cache and the connections. It says what it set.
func memoryDefaults(cfg *server.Config, getenv func(string) string, read func(string) ([]byte, error)) (notes []string) {
	limit := cgroupMemoryLimit(read)
	if limit == 0 {
		return nil
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(limit / 10 * 9)
		notes = append(notes, fmt.Sprintf("container memory limit %d bytes: Go memory limit set to %d (GOMEMLIMIT overrides)", limit, limit/10*9))
	}
	if cfg.TreeMemoryLimit == 0 {
		cfg.TreeMemoryLimit = limit / 3
		notes = append(notes, fmt.Sprintf("treeMemoryLimit set to %d bytes, a third of the container's memory (treeMemoryLimit overrides)", cfg.TreeMemoryLimit))
	}
	return notes
}
