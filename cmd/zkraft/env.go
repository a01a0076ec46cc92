package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zkraft/zkraft/server"
)

// envKeys maps the official ZooKeeper image's environment variables to the zoo.cfg keys
// its entrypoint writes them as.
var envKeys = []struct{ env, key string }{
	{"ZOO_DATA_DIR", "dataDir"},
	{"ZOO_DATA_LOG_DIR", "dataLogDir"},
	{"ZOO_TICK_TIME", "tickTime"},
	{"ZOO_INIT_LIMIT", "initLimit"},
	{"ZOO_SYNC_LIMIT", "syncLimit"},
	{"ZOO_MAX_CLIENT_CNXNS", "maxClientCnxns"},
	{"ZOO_STANDALONE_ENABLED", "standaloneEnabled"},
	{"ZOO_ADMINSERVER_ENABLED", "admin.enableServer"},
	{"ZOO_AUTOPURGE_PURGEINTERVAL", "autopurge.purgeInterval"},
	{"ZOO_AUTOPURGE_SNAPRETAINCOUNT", "autopurge.snapRetainCount"},
	{"ZOO_4LW_COMMANDS_WHITELIST", "4lw.commands.whitelist"},
}

// envConfig turns the image's variables into zoo.cfg text: ZOO_SERVERS is a
// space-separated list of server.N=SPEC entries, ZOO_CFG_EXTRA of key=value pairs.
// ZOO_MY_ID is the server's id (the image writes it to myid). Unset variables add nothing.
func envConfig(getenv func(string) string) (text string, myID int, err error) {
	var b strings.Builder
	for _, k := range envKeys {
		if v := strings.TrimSpace(getenv(k.env)); v != "" {
			fmt.Fprintf(&b, "%s=%s\n", k.key, v)
		}
	}
	for _, list := range []string{"ZOO_SERVERS", "ZOO_CFG_EXTRA"} {
		for _, f := range strings.Fields(getenv(list)) {
			if !strings.Contains(f, "=") {
				return "", 0, fmt.Errorf("%s: %q is not key=value", list, f)
			}
			b.WriteString(f + "\n")
		}
	}
	if v := strings.TrimSpace(getenv("ZOO_MY_ID")); v != "" {
		if myID, err = strconv.Atoi(v); err != nil {
			return "", 0, fmt.Errorf("ZOO_MY_ID: %q is not a number", v)
		}
	}
	return b.String(), myID, nil
}

// applyEnv applies the image's variables to cfg and returns warnings for the keys zkraft
// does not support.
func applyEnv(getenv func(string) string, cfg *server.Config) ([]string, error) {
	text, myID, err := envConfig(getenv)
	if err != nil {
		return nil, err
	}
	warnings, err := parseZooCfg(strings.NewReader(text), cfg)
	if err != nil {
		return warnings, fmt.Errorf("environment: %v", err)
	}
	if myID != 0 {
		cfg.ServerID = myID
	}
	return warnings, nil
}

// parseServersFlag reads --servers: comma-separated server.N=SPEC entries.
func parseServersFlag(list []string, cfg *server.Config) error {
	cfg.Servers = nil
	_, err := parseZooCfg(strings.NewReader(strings.Join(list, "\n")), cfg)
	return err
}
