package main

import (
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/server/ztest"
)

// target is one server under test.
type target struct {
	name    string
	members []string // client addresses (host:port): the server, or a cluster's members
	pids    []int    // empty when unknown (an external server without --pid)
	srv     *ztest.Server
	cluster *ztest.Cluster

	// data reports whether the read data set (see prepareData) exists on this server.
	data bool
	// down is set once the server could not be reached; its later cells are skipped.
	down error
}

// startTargets starts the servers the config names, each on its own free port with its own
// data dir (ztest does that). A server that does not start is reported, and the others
// are still measured.
func startTargets(cfg config) ([]*target, []error) {
	if cfg.addr != "" {
		t := &target{name: "server", members: splitList(cfg.addr)}
		if cfg.pid > 0 {
			t.pids = []int{cfg.pid}
		}
		return []*target{t}, nil
	}
	var (
		out  []*target
		errs []error
	)
	for _, name := range cfg.targets {
		opts := ztest.Options{
			// Both servers refuse more than 60 connections from one address by
			// default; the 64-session cells and their extra writer need more.
			ExtraConfig: map[string]string{"maxClientCnxns": "0"},
			Logf:        cfg.logf,
		}
		if name == "zkraft" {
			opts.Binary = cfg.zkraftBin
		}
		t, err := startTarget(name, cfg.cluster, opts)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: start: %w", name, err))
			continue
		}
		cfg.logf("%s listening on %s (pids %v)", name, strings.Join(t.members, ","), t.pids)
		out = append(out, t)
	}
	return out, errs
}

// startTarget starts one server, or with members > 0 a cluster of that many.
func startTarget(name string, members int, opts ztest.Options) (*target, error) {
	t := &target{name: name}
	if members > 0 {
		start := ztest.StartZooKeeperEnsemble
		if name == "zkraft" {
			start = ztest.StartZkraftCluster
		}
		c, err := start(members, opts)
		if err != nil {
			return nil, err
		}
		t.cluster = c
		for _, m := range c.Members {
			t.members = append(t.members, m.Addr)
			t.pids = append(t.pids, m.Cmd.Process.Pid)
		}
		return t, nil
	}
	start := ztest.StartZooKeeper
	if name == "zkraft" {
		start = ztest.StartZkraft
	}
	srv, err := start(opts)
	if err != nil {
		return nil, err
	}
	t.srv, t.members = srv, []string{srv.Addr}
	if srv.Cmd != nil && srv.Cmd.Process != nil {
		t.pids = []int{srv.Cmd.Process.Pid}
	}
	return t, nil
}

func stopTargets(cfg config, targets []*target) {
	for _, t := range targets {
		if t.cluster != nil {
			t.cluster.Stop()
		}
		if t.srv == nil {
			continue
		}
		if err := t.srv.Stop(); err != nil {
			cfg.logf("%s: stop: %v", t.name, err)
		}
	}
}

// byRole returns a cluster's members followers first and the leader last, by what each
// member's srvr says of its mode; a member that does not answer counts as a follower.
// Sessions are placed by member index (see roundRobin), and elections put the leader at
// different indexes on the two targets (Raft's randomized timeouts; a fresh ZooKeeper
// ensemble elects its highest myid): without this order the same session of a cell
// could sit on the leader of one target and on a follower of the other (the watch
// workload's one writer did). Asked per cell, as leadership may move during a run.
func byRole(members []string) []string {
	if len(members) < 2 {
		return members
	}
	var followers, leaders []string
	for _, m := range members {
		if out, err := ztest.FourLetter(m, "srvr"); err == nil && strings.Contains(out, "\nMode: leader") {
			leaders = append(leaders, m)
		} else {
			followers = append(followers, m)
		}
	}
	return append(followers, leaders...)
}
