package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// memProbe reads a running server's heap and its collector's pauses: zkraft's from its
// /metrics (go_heap_live_bytes after a POST /debug/gc, plus tree_offheap_bytes if the
// server has it, and the go_gc_pause_seconds histogram), ZooKeeper's with jcmd (GC.run,
// then GC.heap_info's used bytes) and from its GC log (-Xlog:gc).
type memProbe struct {
	name       string
	metricsURL string     // zkraft: http://127.0.0.1:port
	pid        func() int // zookeeper: the JVM's pid (it changes on restart)
	gcLog      string     // zookeeper: the -Xlog:gc file
}

// liveHeap forces a full collection and returns the bytes the server's data holds then:
// zkraft's live Go heap plus its off-heap tree bytes, ZooKeeper's used heap.
func (p *memProbe) liveHeap() (int64, error) {
	if p.name == "zkraft" {
		if _, err := httpDo(http.MethodPost, p.metricsURL+"/debug/gc"); err != nil {
			return 0, fmt.Errorf("debug/gc: %w", err)
		}
		body, err := httpDo(http.MethodGet, p.metricsURL+"/metrics")
		if err != nil {
			return 0, err
		}
		s := promSamples(body)
		live, ok := s["go_heap_live_bytes"]
		if !ok {
			return 0, fmt.Errorf("no go_heap_live_bytes in /metrics")
		}
		return int64(live + s["tree_offheap_bytes"]), nil // off-heap: 0 when absent
	}
	pid := fmt.Sprint(p.pid())
	if out, err := jcmd(pid, "GC.run"); err != nil {
		return 0, fmt.Errorf("jcmd GC.run: %v: %s", err, out)
	}
	out, err := jcmd(pid, "GC.heap_info")
	if err != nil {
		return 0, fmt.Errorf("jcmd GC.heap_info: %v: %s", err, out)
	}
	return heapInfoUsed(out)
}

// pauseMark is where a window of collector pauses starts.
type pauseMark struct {
	pauses, stopping []promBucket // zkraft: the pause histograms then
	logged           int          // zookeeper: pauses in the GC log then
}

func (p *memProbe) mark() (pauseMark, error) {
	if p.name == "zkraft" {
		total, stopping, err := p.pauseHistograms()
		return pauseMark{pauses: total, stopping: stopping}, err
	}
	log, err := os.ReadFile(p.gcLog)
	return pauseMark{logged: len(gcLogPauses(string(log)))}, err
}

// pauseStats are the collector's pauses in a window: zkraft's as bucket upper bounds,
// with the part spent stopping the threads; ZooKeeper's from its log (stopP99 0).
type pauseStats struct {
	n                     uint64
	p99, longest, stopP99 time.Duration
}

func (p *memProbe) pausesSince(m pauseMark) (pauseStats, error) {
	var st pauseStats
	if p.name == "zkraft" {
		total, stopping, err := p.pauseHistograms()
		if err != nil {
			return st, err
		}
		d, err := histDelta(m.pauses, total)
		if err != nil {
			return st, err
		}
		st.p99, st.n = bucketQuantile(d, 0.99)
		st.longest, _ = bucketQuantile(d, 1)
		if d, err = histDelta(m.stopping, stopping); err != nil {
			return st, err
		}
		st.stopP99, _ = bucketQuantile(d, 0.99)
		return st, nil
	}
	log, err := os.ReadFile(p.gcLog)
	if err != nil {
		return st, err
	}
	all := gcLogPauses(string(log))
	if m.logged > len(all) {
		return st, fmt.Errorf("GC log shrank: %d pauses, then %d", m.logged, len(all))
	}
	win := all[m.logged:]
	return pauseStats{n: uint64(len(win)), p99: durationQuantile(win, 0.99), longest: durationQuantile(win, 1)}, nil
}

func (p *memProbe) pauseHistograms() (total, stopping []promBucket, err error) {
	body, err := httpDo(http.MethodGet, p.metricsURL+"/metrics")
	if err != nil {
		return nil, nil, err
	}
	s := promSamples(body)
	if total, err = promHistogram(s, "go_gc_pause_seconds"); err != nil {
		return nil, nil, err
	}
	stopping, err = promHistogram(s, "go_gc_pause_stopping_seconds")
	return total, stopping, err
}

func httpDo(method, url string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a GC of a 10M tree
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

func jcmd(pid, command string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "jcmd", pid, command).CombinedOutput()
	return string(out), err
}
