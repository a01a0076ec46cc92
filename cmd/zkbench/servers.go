package main

import (
	"fmt"

	"github.com/zkraft/zkraft/server/ztest"
)

// target is one server under test.
type target struct {
	name string
	addr string
	pid  int // 0 when unknown (an external server without --pid)
	srv  *ztest.Server

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
		return []*target{{name: "server", addr: cfg.addr, pid: cfg.pid}}, nil
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
		start := ztest.StartZooKeeper
		if name == "zkraft" {
			start = ztest.StartZkraft
			opts.Binary = cfg.zkraftBin
		}
		cfg.logf("starting %s", name)
		srv, err := start(opts)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: start: %w", name, err))
			continue
		}
		t := &target{name: name, addr: srv.Addr, srv: srv}
		if srv.Cmd != nil && srv.Cmd.Process != nil {
			t.pid = srv.Cmd.Process.Pid
		}
		cfg.logf("%s listening on %s (pid %d)", name, t.addr, t.pid)
		out = append(out, t)
	}
	return out, errs
}

func stopTargets(cfg config, targets []*target) {
	for _, t := range targets {
		if t.srv == nil {
			continue
		}
		if err := t.srv.Stop(); err != nil {
			cfg.logf("%s: stop: %v", t.name, err)
		}
	}
}
