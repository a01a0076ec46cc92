package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

// writeMemoryTable prints the storage runs' memory and tail figures: the RSS after the
// fill and after a restart and full read, heap bytes per znode beyond its data, the
// mixed load's tail and the collector's pauses in it (with the small-tree reference),
// and the heap each watch costs.
func writeMemoryTable(out io.Writer, rep storageReport) {
	fmt.Fprintf(out, "\nmemory and GC: heap/znode = (live heap after the fill - empty server's - znodes x %d B of data) / znodes, after a full collection (paths count as overhead);\n", rep.ValueSize)
	fmt.Fprintf(out, "mixed = %d sessions, 50%% getData / 50%% setData of random znodes for %v, snapshots off; GC pause p99/max: zkraft bucket bounds, ZooKeeper its -Xlog:gc lines;\nGC stop = zkraft's part of a pause spent stopping the threads (scheduling waits on a busy machine);\n", mixedSessions, mixedWindow)
	fmt.Fprintf(out, "watch B = the live heap's growth per watch, %d sessions x a data and a child watch on each of up to %d znodes\n\n", watchSessions, watchPaths)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "znodes\ttarget\tRSS loaded MiB\tRSS restart+read MiB\tread s\theap/znode B\tmixed ops/s\tmixed p99 ms\tmixed p99.9 ms\tGC pauses\tGC p99 ms\tGC max ms\tGC stop p99 ms\twatches\twatch B\t")
	mixedRow := func(m mixedResult) string {
		if m.Error != "" {
			return "FAILED: " + m.Error + "\t\t\t\t\t\t"
		}
		gc := fmt.Sprintf("%.3f\t%.3f\t%.3f", m.GCP99Ms, m.GCMaxMs, m.GCStopP99Ms)
		if m.Target != "zkraft" {
			gc = fmt.Sprintf("%.3f\t%.3f\t-", m.GCP99Ms, m.GCMaxMs)
		}
		if m.GCPauses == 0 {
			gc = "-\t-\t-"
		}
		return fmt.Sprintf("%.0f\t%.2f\t%.2f\t%d\t%s", float64(m.Ops)/mixedWindow.Seconds(), m.P99Ms, m.P999Ms, m.GCPauses, gc)
	}
	for _, m := range rep.Reference {
		fmt.Fprintf(tw, "%d\t%s\t\t\t\t\t%s\t\t\t\n", m.Znodes, m.Target, mixedRow(m))
	}
	for _, r := range rep.Results {
		if r.Error != "" && r.Mixed.Ops == 0 && r.RSSReadBytes == 0 && r.HeapFilledBytes == 0 {
			fmt.Fprintf(tw, "%d\t%s\tFAILED: %s\t\t\t\t\t\t\t\t\t\t\t\t\t\n", r.Znodes, r.Target, r.Error)
			continue
		}
		watch := "-\t-"
		if r.Watches > 0 {
			watch = fmt.Sprintf("%d\t%.0f", r.Watches, float64(r.WatchHeapBytes)/float64(r.Watches))
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.1f\t%.0f\t%s\t%s\t\n", r.Znodes, r.Target, r.RSSBytes>>20, r.RSSReadBytes>>20, r.ReadSeconds,
			r.HeapPerZnode, mixedRow(r.Mixed), watch)
	}
	tw.Flush()
	for _, r := range rep.Results {
		if r.JavaHeap != "" {
			fmt.Fprintf(out, "  %s at %d znodes ran with -Xmx%s\n", r.Target, r.Znodes, r.JavaHeap)
		}
		if r.Error != "" {
			fmt.Fprintf(out, "  %s at %d znodes: %s\n", r.Target, r.Znodes, r.Error)
		}
	}
	writeMemoryRatios(out, rep)
}

func writeMemoryRatios(out io.Writer, rep storageReport) {
	find := func(rs []storageResult, target string, n int) *storageResult {
		for i := range rs {
			if rs[i].Target == target && rs[i].Znodes == n && rs[i].Error == "" {
				return &rs[i]
			}
		}
		return nil
	}
	q := func(x, y float64) string {
		if y == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2fx", x/y)
	}
	seen := map[int]bool{}
	for _, r := range rep.Results {
		if seen[r.Znodes] {
			continue
		}
		seen[r.Znodes] = true
		a, b := find(rep.Results, "zkraft", r.Znodes), find(rep.Results, "zookeeper", r.Znodes)
		if a == nil || b == nil {
			continue
		}
		perWatch := func(s *storageResult) float64 {
			if s.Watches == 0 {
				return 0
			}
			return float64(s.WatchHeapBytes) / float64(s.Watches)
		}
		fmt.Fprintf(out, "  ratio zkraft/zookeeper at %d znodes: RSS loaded %s, RSS restart+read %s, heap/znode %s, mixed p99.9 %s, watch B %s\n", r.Znodes,
			q(float64(a.RSSBytes), float64(b.RSSBytes)), q(float64(a.RSSReadBytes), float64(b.RSSReadBytes)), q(a.HeapPerZnode, b.HeapPerZnode),
			q(a.Mixed.P999Ms, b.Mixed.P999Ms), q(perWatch(a), perWatch(b)))
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
