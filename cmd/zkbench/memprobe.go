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
	buckets []promBucket // zkraft: the pause histogram then
	pauses  int          // zookeeper: pauses in the GC log then
}

func (p *memProbe) mark() (pauseMark, error) {
	if p.name == "zkraft" {
		b, err := p.pauseHistogram()
		return pauseMark{buckets: b}, err
	}
	log, err := os.ReadFile(p.gcLog)
	return pauseMark{pauses: len(gcLogPauses(string(log)))}, err
}

// pausesSince returns the number of pauses since m, their p99 and their longest (zkraft:
// bucket upper bounds).
func (p *memProbe) pausesSince(m pauseMark) (n uint64, p99, longest time.Duration, err error) {
	if p.name == "zkraft" {
		b, err := p.pauseHistogram()
		if err != nil {
			return 0, 0, 0, err
		}
		d, err := histDelta(m.buckets, b)
		if err != nil {
			return 0, 0, 0, err
		}
		p99, n = bucketQuantile(d, 0.99)
		longest, _ = bucketQuantile(d, 1)
		return n, p99, longest, nil
	}
	log, err := os.ReadFile(p.gcLog)
	if err != nil {
		return 0, 0, 0, err
	}
	all := gcLogPauses(string(log))
	if m.pauses > len(all) {
		return 0, 0, 0, fmt.Errorf("GC log shrank: %d pauses, then %d", m.pauses, len(all))
	}
	win := all[m.pauses:]
	return uint64(len(win)), durationQuantile(win, 0.99), durationQuantile(win, 1), nil
}

func (p *memProbe) pauseHistogram() ([]promBucket, error) {
	body, err := httpDo(http.MethodGet, p.metricsURL+"/metrics")
	if err != nil {
		return nil, err
	}
	return promHistogram(promSamples(body), "go_gc_pause_seconds")
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
