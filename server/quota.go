package server

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/session"
)

// quotaErrors is quota_exceeded_error_per_namespace: creates and setData refused for a
// hard quota, by the top name of their path. ZooKeeper counts them in its prep step,
// which only the leader runs; zkraft decides them in every member's apply and counts
// them, and logs soft-quota warnings, only where that member leads (or stands alone).
type quotaErrors struct {
	leader atomic.Pointer[quorum.Node] // the node, once Start has it; the FSM calls before that
	mu     sync.Mutex
	counts map[string]int64
}

// quotaExceeded is datatree.Options.OnQuota. It runs inside the FSM's apply.
func (s *Server) quotaExceeded(ev datatree.QuotaEvent) {
	n := s.quota.leader.Load()
	if n == nil || (n.IsClustered() && !n.IsLeader()) {
		return
	}
	s.log.Warn(ev.Message)
	if !ev.Hard || ev.Namespace == "" {
		return
	}
	s.quota.mu.Lock()
	if s.quota.counts == nil {
		s.quota.counts = map[string]int64{}
	}
	s.quota.counts[ev.Namespace]++
	s.quota.mu.Unlock()
}

// quotaMetric is one value of a per-namespace quota metric.
type quotaMetric struct {
	name, namespace string
	value           int64
}

// quotaMetrics are ZooKeeper 3.8's quota gauge sets (QuotaMetricsUtils) and its
// quota_exceeded_error_per_namespace counter set, sorted by name and namespace.
func (s *Server) quotaMetrics() []quotaMetric {
	var countLimit, bytesLimit, countUsage, bytesUsage map[string]int64
	s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) {
		countLimit, bytesLimit, countUsage, bytesUsage = t.QuotaMetrics()
	})
	s.quota.mu.Lock()
	exceeded := make(map[string]int64, len(s.quota.counts))
	for k, v := range s.quota.counts {
		exceeded[k] = v
	}
	s.quota.mu.Unlock()
	var out []quotaMetric
	for _, set := range []struct {
		name string
		m    map[string]int64
	}{
		{"quota_bytes_limit_per_namespace", bytesLimit},
		{"quota_bytes_usage_per_namespace", bytesUsage},
		{"quota_count_limit_per_namespace", countLimit},
		{"quota_count_usage_per_namespace", countUsage},
		{"quota_exceeded_error_per_namespace", exceeded},
	} {
		start := len(out)
		for ns, v := range set.m {
			out = append(out, quotaMetric{set.name, ns, v})
		}
		sort.Slice(out[start:], func(i, j int) bool { return out[start+i].namespace < out[start+j].namespace })
	}
	return out
}

// writeQuotaMetrics writes the quota metrics in Prometheus' text format, labelled by
// namespace as ZooKeeper's Prometheus provider labels a set ("key").
func writeQuotaMetrics(b *strings.Builder, ms []quotaMetric) {
	last := ""
	for _, m := range ms {
		if m.name != last {
			typ := "gauge"
			if m.name == "quota_exceeded_error_per_namespace" {
				typ = "counter"
			}
			fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", m.name, m.name, m.name, typ)
			last = m.name
		}
		fmt.Fprintf(b, "%s{key=%q} %d\n", m.name, m.namespace, m.value)
	}
}
