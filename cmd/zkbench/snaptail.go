package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zkraft/zkraft/server/ztest"
)

// The snapshot tail (--snapshot-tail): what snapshots add to the write latency, with
// everything else the same. For each tree size and target, two fresh servers are filled
// alike and then run the storage writers (storageSessions sessions setting random
// znodes, one in flight each) for storageWindow: one with snapCount storageSnap, so
// that snapshots of the whole tree fall in the window, and one with snapshots off. The
// window without snapshots is the reference: its p99 times three is the bound the
// windows are counted against, as the write-path issue states its target ("no write
// above 3x the p99 of the same cell without snapshots"). The storage run's quiet window
// (storage.go) comes after a restart and a full read, a different phase, so it cannot
// tell snapshots apart from the phase.
//
// With --cluster each target is an ensemble of that many members, the writers spread
// over them followers first (as the workloads place sessions), and snapCount set on every
// member: the write-path issue's tail was seen on a 3-member cluster, where a member's
// snapshot competes with its replication as well as its clients.

type snapTailResult struct {
	Target    string  `json:"target"`
	Members   int     `json:"members"` // 0: standalone
	Znodes    int     `json:"znodes"`
	Snapshots bool    `json:"snapshots"`
	Writes    uint64  `json:"writes"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	MaxMs     float64 `json:"max_ms"`
	Over3x    float64 `json:"share_over_3x_reference_p99"` // of the writes, against the same target's window without snapshots
	Error     string  `json:"error,omitempty"`
	hist      histogram
}

func runSnapshotTail(cfg config, out io.Writer) int {
	var rs []snapTailResult
	failed := false
	for _, n := range cfg.snapTail {
		for _, name := range cfg.targets {
			var pair [2]snapTailResult
			for i, snaps := range []bool{false, true} {
				cfg.logf("snapshot tail: %s with %d znodes, snapshots %v", name, n, snaps)
				pair[i] = measureSnapTail(cfg, name, n, snaps)
				if pair[i].Error != "" {
					failed = true
					cfg.logf("snapshot tail: %s: %s", name, pair[i].Error)
				}
			}
			if pair[0].Error == "" {
				limit := 3 * pair[0].hist.quantile(0.99)
				for i := range pair {
					pair[i].Over3x = share(pair[i].hist.over(limit), pair[i].hist.n)
				}
			}
			rs = append(rs, pair[:]...)
		}
	}
	writeSnapTailTable(out, rs)
	if cfg.jsonPath != "" {
		if err := writeJSON(cfg.jsonPath, rs); err != nil {
			cfg.logf("%v", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

func measureSnapTail(cfg config, name string, n int, snapshots bool) (r snapTailResult) {
	r = snapTailResult{Target: name, Members: cfg.cluster, Znodes: n, Snapshots: snapshots}
	snapCount := storageNoSnap
	if snapshots {
		snapCount = storageSnap
	}
	stop, conns, err := startSnapTailTarget(cfg, name, n, snapCount)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer stop()
	defer closeAll(conns)
	time.Sleep(2 * time.Second) // as the storage run rests before its window
	hist, writes, err := writeWindow(conns, n, storageValue(cfg), storageWindow)
	if err != nil {
		r.Error = "writes: " + err.Error()
		return r
	}
	r.hist, r.Writes = hist, writes
	r.P99Ms, r.P999Ms, r.MaxMs = ms(hist.quantile(0.99)), ms(hist.quantile(0.999)), ms(hist.max)
	return r
}

// startSnapTailTarget starts target name with snapCount, standalone or as a cluster of
// cfg.cluster members, opens the writers' sessions (spread over the members, followers
// first) and fills the tree with n znodes. On an error nothing is left running.
func startSnapTailTarget(cfg config, name string, n int, snapCount string) (stop func(), conns []*zk.Conn, err error) {
	if cfg.cluster == 0 {
		s, conns, err := startFilled(cfg, name, n, snapCount)
		if err != nil {
			return nil, nil, err
		}
		return s.stop, conns, nil
	}
	opts := ztest.Options{ExtraConfig: map[string]string{"maxClientCnxns": "0", "snapCount": snapCount},
		Logf: cfg.logf, JavaHeap: javaHeapFor(n)}
	if name == "zkraft" {
		opts.Binary = cfg.zkraftBin
	}
	t, err := startTarget(name, cfg.cluster, opts)
	if err != nil {
		return nil, nil, err
	}
	if conns, err = connectAndFill(cfg, byRole(t.members), n, t.cluster.Stop); err != nil {
		return nil, nil, err
	}
	return t.cluster.Stop, conns, nil
}

func writeSnapTailTable(out io.Writer, rs []snapTailResult) {
	where := "a standalone server"
	if len(rs) > 0 && rs[0].Members > 0 {
		where = fmt.Sprintf("%d members, writers spread over them (followers first)", rs[0].Members)
	}
	fmt.Fprintf(out, "zkbench snapshot tail: %s, %s, %d writers for %v on a fresh tree, snapCount %s against snapshots off\n\n",
		time.Now().Format("2006-01-02 15:04:05"), where, storageSessions, storageWindow, storageSnap)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "znodes\ttarget\tsnapshots\twrites\tp99 ms\tp99.9 ms\tmax ms\t% > 3x p99 without\t")
	for _, r := range rs {
		on := "off"
		if r.Snapshots {
			on = "on"
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "%d\t%s\t%s\tFAILED: %s\t\t\t\t\t\n", r.Znodes, r.Target, on, r.Error)
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%.2f\t%.2f\t%.1f\t%.3f\t\n", r.Znodes, r.Target, on, r.Writes, r.P99Ms, r.P999Ms, r.MaxMs, 100*r.Over3x)
	}
	tw.Flush()
	fmt.Fprintln(out, "\n% > 3x p99 without: the share of the window's writes above three times the p99 of the same target's window without snapshots")
}

// share is n/of, or 0 where of is 0.
func share(n, of uint64) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}
