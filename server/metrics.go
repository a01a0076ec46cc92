package server

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/session"
)

// writeMetrics serves Prometheus' text format: every numeric mntr value under ZooKeeper's
// metric name (as ZooKeeper's PrometheusMetricsProvider names them; a serving member's
// quorum_size among them; ZooKeeper's counters and summaries of server_metrics.go as a
// counter and a summary with its quantiles, as that provider serves them), quorum_size
// on a standalone (1) or read-only server too, and Raft's own figures (raft_term,
// raft_commit_index, raft_applied_index, raft_last_snapshot_index, raft_last_log_index),
// the Go runtime's heap and collector figures (metrics_runtime.go), the per-namespace
// quota metrics (quota.go), and connections_closed_total by reason (closed.go).
func (s *Server) writeMetrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	var b strings.Builder
	gauge := func(name string, v float64, help string) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s gauge\n%s %s\n", name, help, name, name, strconv.FormatFloat(v, 'g', -1, 64))
	}
	for _, m := range s.monitorGauges() {
		var v float64
		switch x := m.value.(type) {
		case int:
			v = float64(x)
		case int32:
			v = float64(x)
		case int64:
			v = float64(x)
		case uint64:
			v = float64(x)
		case float64:
			v = x
		default:
			continue // version, server_state, peer_state
		}
		gauge(m.name, v, m.name+", as mntr reports it")
	}
	if !s.node.IsClustered() {
		// A member's comes with mntr's values; a standalone server is a quorum of one.
		gauge("quorum_size", 1, "voting members")
	} else if s.isReadOnly() {
		gauge("quorum_size", float64(s.quorumSize()), "voting members")
	}
	leader := 0.0
	if s.node.IsLeader() {
		leader = 1
	}
	gauge("leader", leader, "1 on the leader")
	for _, c := range s.metrics.counters() {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s counter\n%s %d\n", c.name, c.help, c.name, c.name, c.c.Load())
	}
	var sb []byte
	for _, m := range s.metrics.summaries() {
		sb = m.s.writeProm(sb, m.name, m.help, m.percentiles)
	}
	b.Write(sb)
	st := s.node.Stats()
	keys := []string{"term", "commit_index", "applied_index", "last_snapshot_index", "last_log_index"}
	sort.Strings(keys)
	for _, k := range keys {
		if v, err := strconv.ParseFloat(st[k], 64); err == nil {
			gauge("raft_"+k, v, "Raft's "+strings.ReplaceAll(k, "_", " "))
		}
	}
	if s.memCap.limit > 0 {
		gauge("tree_memory_limit_bytes", float64(s.memCap.limit), "treeMemoryLimit: writes that grow the tree are refused above it")
		var bytes int64
		s.node.FSM.Read(func(t *datatree.Tree, _ *session.Table) { bytes = treeBytes(t) })
		gauge("tree_memory_bytes", float64(bytes), "the memory the tree's content takes: node records, names and data")
		fmt.Fprintf(&b, "# HELP tree_memory_refused_total writes refused at the tree's memory cap\n# TYPE tree_memory_refused_total counter\ntree_memory_refused_total %d\n", s.memCap.refused.Load())
	}
	gauge("tree_offheap_bytes", float64(datatree.OffHeapBytes()), "the tree's pages and slabs outside the Go heap (in RSS, not in Go's heap figures)")
	writeRuntimeMetrics(&b)
	if !s.cfg.MetricsNoJVMInfo {
		writeJVMMemoryMetrics(&b)
	}
	writeQuotaMetrics(&b, s.quotaMetrics())
	b.WriteString("# HELP connections_closed_total client connections the server closed, by reason\n# TYPE connections_closed_total counter\n")
	for r := closeReason(0); r < numCloseReasons; r++ {
		fmt.Fprintf(&b, "connections_closed_total{reason=%q} %d\n", r, s.stats.closed[r].Load())
	}
	w.Write([]byte(b.String()))
}
