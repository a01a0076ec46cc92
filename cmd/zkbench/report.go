package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"
)

// result is one cell's figures; it is also the JSON record.
type result struct {
	Target    string  `json:"target"`
	Workload  string  `json:"workload"`
	Sessions  int     `json:"sessions"`
	Depth     int     `json:"depth"`
	Seconds   float64 `json:"seconds"`
	Ops       uint64  `json:"ops"`
	Errors    uint64  `json:"errors"`
	OpsPerSec float64 `json:"ops_per_sec"`
	MeanMs    float64 `json:"mean_ms"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	P999Ms    float64 `json:"p999_ms"`
	MaxMs     float64 `json:"max_ms"`
	RSSBytes  int64   `json:"rss_bytes"` // after the cell; 0 if unknown
	// CPUMsPer1k is the server's CPU time (all its processes, user + system) per 1,000
	// operations of the timed part, in ms; 0 if unknown.
	CPUMsPer1k float64 `json:"cpu_ms_per_1k_ops"`
	Note       string  `json:"note,omitempty"`
	// Marked is how many ops the workload marked (visibility-poll: stale first reads;
	// visibility-watch: events before the writer's reply).
	Marked uint64 `json:"marked,omitempty"`
	Error  string `json:"error,omitempty"` // set: the figures are not to be trusted
}

func newResult(t *target, w *workload, sessions int, cfg config, st stats) result {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r := result{
		Target:   t.name,
		Workload: w.name,
		Sessions: sessions,
		Depth:    cfg.depth,
		Seconds:  st.elapsed.Seconds(),
		Ops:      st.ops,
		Errors:   st.errs,
		MeanMs:   ms(st.hist.mean()),
		P50Ms:    ms(st.hist.quantile(0.50)),
		P99Ms:    ms(st.hist.quantile(0.99)),
		P999Ms:   ms(st.hist.quantile(0.999)),
		MaxMs:    ms(st.hist.max),
		RSSBytes: rss(t.pids...),
		Note:     st.note,
		Marked:   st.marked,
	}
	if st.elapsed > 0 {
		r.OpsPerSec = float64(st.ops) / st.elapsed.Seconds()
	}
	if st.cpu >= 0 && st.ops > 0 {
		r.CPUMsPer1k = st.cpu * 1e6 / float64(st.ops)
	}
	if st.err != nil {
		r.Error = st.err.Error()
	}
	return r
}

type report struct {
	cfg     config
	started time.Time
	targets []string
	results []result
}

func (r *report) failed() bool {
	for _, res := range r.results {
		if res.Error != "" {
			return true
		}
	}
	return false
}

func (r *report) find(target, workload string, sessions int) *result {
	for i := range r.results {
		res := &r.results[i]
		if res.Target == target && res.Workload == workload && res.Sessions == sessions {
			return res
		}
	}
	return nil
}

// metric is one column group of the table.
type metric struct {
	title string
	value func(*result) (float64, bool)
	cell  func(float64) string
}

var metrics = []metric{
	{"ops/s", func(r *result) (float64, bool) { return r.OpsPerSec, r.Ops > 0 }, fmtRate},
	{"p50 ms", func(r *result) (float64, bool) { return r.P50Ms, r.Ops > 0 }, fmtMs},
	{"p99 ms", func(r *result) (float64, bool) { return r.P99Ms, r.Ops > 0 }, fmtMs},
	{"p99.9 ms", func(r *result) (float64, bool) { return r.P999Ms, r.Ops > 0 }, fmtMs},
	{"RSS MiB", func(r *result) (float64, bool) { return float64(r.RSSBytes) / (1 << 20), r.RSSBytes > 0 }, fmtMiB},
	{"CPU/1k ms", func(r *result) (float64, bool) { return r.CPUMsPer1k, r.CPUMsPer1k > 0 }, fmtMs},
}

// writeTable prints one row per workload x sessions. With two targets each metric has a
// column per target and the ratio first/second (zkraft/zookeeper with the default order).
func (r *report) writeTable(out io.Writer) {
	cfg := r.cfg
	where := "one server"
	switch {
	case cfg.cluster > 0 && cfg.onLeader:
		where = fmt.Sprintf("%d members, every session on the leader", cfg.cluster)
	case cfg.cluster > 0:
		where = fmt.Sprintf("%d members, sessions spread over them (followers first)", cfg.cluster)
	}
	fmt.Fprintf(out, "zkbench: %s, %s, %v per cell, %d requests in flight per session, values of %d bytes\n\n",
		r.started.Format(time.DateTime), where, cfg.duration, cfg.depth, cfg.valueSize)
	ratio := len(r.targets) == 2
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Two header lines: metric groups, then targets.
	groups := []string{"", ""}
	names := []string{"workload", "sessions"}
	for _, m := range metrics {
		for i, t := range r.targets {
			g := ""
			if i == 0 {
				g = m.title
			}
			groups = append(groups, g)
			names = append(names, t)
		}
		if ratio {
			groups = append(groups, "")
			names = append(names, "ratio")
		}
	}
	writeRow(tw, groups)
	writeRow(tw, names)
	var notes []string
	for _, wname := range cfg.workloads {
		for _, s := range cfg.sessions {
			row := []string{wname, strconv.Itoa(s)}
			for _, m := range metrics {
				var vals []float64
				for _, t := range r.targets {
					res := r.find(t, wname, s)
					v, ok := 0.0, false
					if res != nil && res.Error == "" {
						v, ok = m.value(res)
					}
					if !ok {
						row = append(row, "n/a")
						v = -1
					} else {
						row = append(row, m.cell(v))
					}
					vals = append(vals, v)
				}
				if ratio {
					row = append(row, fmtRatio(vals[0], vals[1]))
				}
			}
			writeRow(tw, row)
			for _, t := range r.targets {
				if res := r.find(t, wname, s); res != nil {
					if res.Error != "" {
						notes = append(notes, fmt.Sprintf("%s %d sessions on %s: FAILED: %s", wname, s, t, res.Error))
					} else if res.Note != "" {
						notes = append(notes, fmt.Sprintf("%s %d sessions on %s: %s", wname, s, t, res.Note))
					}
				}
			}
		}
	}
	tw.Flush()
	if ratio {
		fmt.Fprintf(out, "\nratio = %s / %s: above 1 is better for ops/s, below 1 is better for latency, RSS and CPU.\n", r.targets[0], r.targets[1])
	}
	fmt.Fprintln(out, "\nwhat one op is:")
	width := 0
	for _, wname := range cfg.workloads {
		width = max(width, len(wname))
	}
	for _, wname := range cfg.workloads {
		if w := workloadByName(wname); w != nil {
			fmt.Fprintf(out, "  %-*s %s\n", width, w.name, w.op)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(out, "\nnotes:")
		for _, n := range notes {
			fmt.Fprintln(out, "  "+n)
		}
	}
}

func writeRow(w io.Writer, cells []string) {
	for _, c := range cells {
		fmt.Fprint(w, c, "\t")
	}
	fmt.Fprintln(w)
}

func fmtRate(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func fmtMiB(v float64) string  { return strconv.FormatFloat(v, 'f', 0, 64) }

func fmtMs(v float64) string {
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 100:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
}

func fmtRatio(a, b float64) string {
	if a < 0 || b <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(a/b, 'f', 2, 64) + "x"
}

// jsonReport is the --json file: the run's settings and one record per cell.
type jsonReport struct {
	Started   time.Time `json:"started"`
	Duration  string    `json:"duration_per_cell"`
	Warmup    string    `json:"warmup"`
	Depth     int       `json:"depth"`
	ValueSize int       `json:"value_size"`
	Targets   []string  `json:"targets"`
	Results   []result  `json:"results"`
	// Ratios (with two targets) are first/second target, as in the table; null where a
	// side has no figure.
	Ratios []ratios `json:"ratios,omitempty"`
}

type ratios struct {
	Workload  string   `json:"workload"`
	Sessions  int      `json:"sessions"`
	OpsPerSec *float64 `json:"ops_per_sec"`
	P50       *float64 `json:"p50"`
	P99       *float64 `json:"p99"`
	P999      *float64 `json:"p999"`
	RSS       *float64 `json:"rss"`
}

func (r *report) ratios() []ratios {
	if len(r.targets) != 2 {
		return nil
	}
	var out []ratios
	for _, w := range r.cfg.workloads {
		for _, s := range r.cfg.sessions {
			a, b := r.find(r.targets[0], w, s), r.find(r.targets[1], w, s)
			ratio := func(m metric) *float64 {
				if a == nil || b == nil || a.Error != "" || b.Error != "" {
					return nil
				}
				va, oka := m.value(a)
				vb, okb := m.value(b)
				if !oka || !okb || vb == 0 {
					return nil
				}
				q := va / vb
				return &q
			}
			out = append(out, ratios{
				Workload: w, Sessions: s,
				OpsPerSec: ratio(metrics[0]), P50: ratio(metrics[1]), P99: ratio(metrics[2]),
				P999: ratio(metrics[3]), RSS: ratio(metrics[4]),
			})
		}
	}
	return out
}

func (r *report) writeJSONFile(path string) error {
	b, err := json.MarshalIndent(jsonReport{
		Started:   r.started,
		Duration:  r.cfg.duration.String(),
		Warmup:    r.cfg.warmup.String(),
		Depth:     r.cfg.depth,
		ValueSize: r.cfg.valueSize,
		Targets:   r.targets,
		Results:   r.results,
		Ratios:    r.ratios(),
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
