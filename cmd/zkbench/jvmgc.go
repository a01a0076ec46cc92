package main

import (
	"bufio"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// heapInfoUsed reads the heap's used bytes from `jcmd <pid> GC.heap_info`, whose first
// line after the pid is the collector's heap, as JDK 17 prints it for G1:
//
//	garbage-first heap   total 262144K, used 20480K [0x..., 0x...)
//
// (Metaspace's "used" lines that follow are not the heap.)
func heapInfoUsed(out string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, " heap ")
		if i < 0 || strings.Contains(line, "Metaspace") {
			continue
		}
		_, rest, ok := strings.Cut(line[i:], "used ")
		if !ok {
			continue
		}
		f := strings.FieldsFunc(rest, func(r rune) bool { return r == ',' || r == ' ' })
		if len(f) == 0 {
			break
		}
		return parseJVMSize(f[0])
	}
	return 0, fmt.Errorf("no heap line with used in GC.heap_info output: %q", out)
}

// parseJVMSize reads 20480K, 20M, 3G or a plain byte count.
func parseJVMSize(s string) (int64, error) {
	mul := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a JVM size: %q", s)
	}
	return n * mul, nil
}

// gcLogPauses returns the stop-the-world pauses of a unified JVM GC log (-Xlog:gc), in
// order, as JDK 17 writes them:
//
//	[1.234s][info][gc] GC(3) Pause Young (Normal) (G1 Evacuation Pause) 24M->3M(256M) 3.456ms
//	[2.001s][info][gc] GC(4) Pause Remark 60M->60M(256M) 1.234ms
//
// Concurrent phases ("Concurrent Mark Cycle 12.3ms") are not pauses and are skipped,
// as are lines without a duration.
func gcLogPauses(log string) []time.Duration {
	var out []time.Duration
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, " Pause ") {
			continue
		}
		f := strings.Fields(line)
		last := f[len(f)-1]
		ms, ok := strings.CutSuffix(last, "ms")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(ms, 64)
		if err != nil || v < 0 {
			continue
		}
		out = append(out, time.Duration(v*float64(time.Millisecond)))
	}
	return out
}

// durationQuantile is the q-th of ds by rank (nearest rank, rounding up), 0 if empty.
func durationQuantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(q * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}
