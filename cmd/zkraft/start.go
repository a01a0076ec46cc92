package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/server"
)

func newStartCommand() *cobra.Command {
	var (
		configPath string
		logLevel   string
		servers    []string
		flagCfg    = server.DefaultConfig()
	)
	cmd := &cobra.Command{
		Use:   "start [zoo.cfg]",
		Short: "Start a server: standalone, or a cluster member (server.N lines, ZOO_SERVERS or --servers)",
		Long: "Start a zkraft server. Settings come from the official ZooKeeper image's environment\n" +
			"variables (ZOO_MY_ID, ZOO_SERVERS, ZOO_TICK_TIME, ..., -Dname=value in JVMFLAGS), then\n" +
			"ZooKeeper's zoo.cfg (--config, or the argument as ZooKeeper's own main class takes it),\n" +
			"then flags; each overrides the one before. Unsupported keys are named in a warning.",
		// ZooKeeper's main classes take the zoo.cfg as their argument, and so does
		// zkServer.sh start, so a zoo.cfg given that way is read, never dropped.
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %v", err)
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			configPath, err := configArgument(configPath, args)
			if err != nil {
				return err
			}
			configPath = mountedConfig(configPath, os.Getenv)
			cfg, warnings, err := loadConfig(cmd, configPath, os.Getenv, &flagCfg, servers)
			for _, w := range warnings {
				log.Warn("config: " + w)
			}
			if err != nil {
				return configError{err}
			}
			if err := adoptZooKeeperData(cmd, cfg, log); err != nil {
				return err
			}
			notes, err := memoryDefaults(&cfg, os.Getenv, os.ReadFile)
			if err != nil {
				return configError{fmt.Errorf("config: %v", err)}
			}
			for _, n := range notes {
				log.Info("config: " + n)
			}
			governor := processGovernor(os.Getenv, log)
			if governor != nil {
				cfg.LongWork = governor.longWork
			}
			srv, err := server.New(cfg, log)
			if err != nil {
				return configError{fmt.Errorf("config: %v", err)}
			}
			stopProfile := startProfile(os.Getenv, log)
			defer stopProfile()
			if err := srv.Start(); err != nil {
				return err
			}
			if governor != nil {
				stopGovernor := make(chan struct{})
				defer close(stopGovernor)
				governor.run(cfg.DataDir, stopGovernor)
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
			select {
			case s := <-sig:
				log.Info("shutting down", "signal", s.String())
				return srv.Shutdown()
			case err := <-srv.LogFailed():
				// As ZooKeeper exits when its log fails: a restart replays the log from
				// disk, and a cluster member catches up from the leader.
				log.Error("stopping: the transaction log failed; restart the server", "err", err)
				srv.Close()
				return err
			}
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "ZooKeeper zoo.cfg to read")
	f.StringVar(&logLevel, "log-level", "info", "debug, info, warn or error")
	f.IntVar(&flagCfg.ClientPort, "client-port", flagCfg.ClientPort, "client port (clientPort)")
	f.StringVar(&flagCfg.ClientPortAddress, "client-address", "", "address to listen on (clientPortAddress)")
	f.StringVar(&flagCfg.DataDir, "data-dir", flagCfg.DataDir, "data directory (dataDir)")
	f.DurationVar(&flagCfg.TickTime, "tick-time", flagCfg.TickTime, "tick time (tickTime)")
	f.IntVar(&flagCfg.MaxClientCnxns, "max-client-cnxns", flagCfg.MaxClientCnxns, "connections per client IP (maxClientCnxns)")
	f.IntVar(&flagCfg.ServerID, "id", 0, "this server's id in a cluster (myid)")
	f.StringSliceVar(&servers, "servers", nil, "cluster members as server.N=host:peerPort:electionPort[:observer][;clientPort], comma-separated")
	f.StringSliceVar(&flagCfg.FourLetterWhitelist, "4lw-whitelist", flagCfg.FourLetterWhitelist, "four-letter words allowed (4lw.commands.whitelist)")
	f.BoolVar(&flagCfg.ReadOnlyMode, "read-only-mode", false, "serve read-only clients while cut off from the quorum (readonlymode.enabled)")
	f.BoolVar(&flagCfg.ExistsACLCheck, "exists-acl-check", flagCfg.ExistsACLCheck, "exists needs READ on a node that exists, as ZooKeeper 3.9.2 (zookeeper.enableExistsACLCheck)")
	f.StringVar(&flagCfg.SASL.JAASFile, "jaas-config", "", "JAAS file whose Server section lists the SASL DIGEST-MD5 users (java.security.auth.login.config)")
	return cmd
}

// configArgument is the zoo.cfg given as the argument or with --config, not both.
func configArgument(flag string, args []string) (string, error) {
	switch {
	case len(args) == 0:
		return flag, nil
	case flag != "" && flag != args[0]:
		return "", fmt.Errorf("two zoo.cfg files given: --config %s and %s", flag, args[0])
	}
	return args[0], nil
}

// mountedConfig is the zoo.cfg to read: the one given, else, as the official image does,
// $ZOO_CONF_DIR/zoo.cfg when it exists, else none.
func mountedConfig(given string, getenv func(string) string) string {
	if given != "" {
		return given
	}
	if dir := getenv("ZOO_CONF_DIR"); dir != "" {
		if p := filepath.Join(dir, "zoo.cfg"); exists(p) {
			return p
		}
	}
	return ""
}

// applyFlags copies the flags the user set over cfg.
func applyFlags(cmd *cobra.Command, cfg, flags *server.Config) {
	set := func(name string, apply func()) {
		if cmd.Flags().Changed(name) {
			apply()
		}
	}
	set("client-port", func() { cfg.ClientPort = flags.ClientPort })
	set("client-address", func() { cfg.ClientPortAddress = flags.ClientPortAddress })
	set("data-dir", func() { cfg.DataDir = flags.DataDir })
	set("tick-time", func() { cfg.TickTime = flags.TickTime })
	set("max-client-cnxns", func() { cfg.MaxClientCnxns = flags.MaxClientCnxns })
	set("4lw-whitelist", func() { cfg.FourLetterWhitelist = flags.FourLetterWhitelist })
	set("id", func() { cfg.ServerID = flags.ServerID })
	set("read-only-mode", func() { cfg.ReadOnlyMode = flags.ReadOnlyMode })
	set("exists-acl-check", func() { cfg.ExistsACLCheck = flags.ExistsACLCheck })
	set("jaas-config", func() { cfg.SASL.JAASFile = flags.SASL.JAASFile })
}

// unsetPort marks a clientPort no source has set.
const unsetPort = -2

// loadConfig builds the configuration: ZooKeeper's defaults, then the official image's
// environment variables, then zoo.cfg (whose server lines, if it has any, replace
// ZOO_SERVERS), then the flags the user set; a cluster member without an id reads myid.
func loadConfig(cmd *cobra.Command, configPath string, getenv func(string) string, flagCfg *server.Config, servers []string) (server.Config, []string, error) {
	cfg := server.DefaultConfig()
	// As ZooKeeper 3.8: the AdminServer is on, on port 8080 of every address.
	cfg.AdminEnabled, cfg.AdminPort = true, 8080
	cfg.ClientPort = unsetPort
	warnings, err := applyEnv(getenv, &cfg)
	if err != nil {
		return cfg, warnings, err
	}
	if configPath != "" {
		envServers := cfg.Servers
		cfg.Servers = nil
		text, err := os.ReadFile(configPath)
		if err != nil {
			return cfg, warnings, err
		}
		cfg.InitialConfiguration = string(text)
		more, err := parseZooCfg(strings.NewReader(string(text)), &cfg)
		warnings = append(warnings, more...)
		if err != nil {
			return cfg, warnings, fmt.Errorf("%s: %v", configPath, err)
		}
		if len(cfg.Servers) == 0 {
			cfg.Servers = envServers
		}
	}
	applyFlags(cmd, &cfg, flagCfg)
	if cmd.Flags().Changed("servers") {
		if err := parseServersFlag(servers, &cfg); err != nil {
			return cfg, warnings, fmt.Errorf("--servers: %v", err)
		}
	}
	w, err := settleMembership(&cfg)
	if warnings = append(warnings, w...); err != nil {
		return cfg, warnings, err
	}
	if !cmd.Flags().Changed("client-port") && !cmd.Flags().Changed("client-address") {
		if err := memberClientAddress(&cfg); err != nil {
			return cfg, warnings, err
		}
	}
	if cfg.ClientPort == unsetPort {
		// As ZooKeeper, a secureClientPort without a clientPort serves TLS only; zkraft
		// serves 2181 when neither is given.
		cfg.ClientPort = 2181
		if cfg.SecureClientPort != 0 {
			cfg.ClientPort = -1
		}
	}
	return cfg, warnings, nil
}

// settleMembership applies ZooKeeper's rules to the server lines read: one line and no
// myid is a standalone server (oneLineStandalone); a member reads its id from myid; every
// member's address must be one the others can reach.
func settleMembership(cfg *server.Config) (warnings []string, err error) {
	if oneLineStandalone(cfg) {
		warnings = append(warnings, "only one server is listed and there is no myid: standalone, as in ZooKeeper")
	}
	if len(cfg.Servers) > 0 && cfg.ServerID == 0 {
		id, err := readMyID(cfg.DataDir)
		if err != nil {
			return warnings, err
		}
		cfg.ServerID = id
	}
	return warnings, reachableMembers(cfg)
}

// oneLineStandalone makes cfg standalone, and says so, if it lists one server, no
// observer, and no id is given or in a myid file: ZooKeeper runs such a server
// standalone (HBase and the official image write such a line). `zkraft start` and the
// tools that seed or read a store from a zoo.cfg apply it alike, so they agree on what
// the server's store holds.
func oneLineStandalone(cfg *server.Config) bool {
	if len(cfg.Servers) != 1 || cfg.Servers[0].Observer || cfg.ServerID != 0 || exists(filepath.Join(cfg.DataDir, "myid")) {
		return false
	}
	cfg.Servers = nil
	return true
}
