package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server"
)

// serverConfig reads the zoo.cfg given, or returns the defaults with dataDir set.
func serverConfig(configPath, dataDir string) (server.Config, error) {
	cfg := server.DefaultConfig()
	if configPath != "" {
		f, err := os.Open(configPath)
		if err != nil {
			return cfg, err
		}
		_, err = parseZooCfg(f, &cfg)
		f.Close()
		if err != nil {
			return cfg, fmt.Errorf("%s: %v", configPath, err)
		}
	}
	if dataDir != "" {
		cfg.DataDir = dataDir
	}
	if cfg.DataDir == "" {
		return cfg, errors.New("give --data-dir or --config")
	}
	oneLineStandalone(&cfg)
	return cfg, nil
}

// storeFlags adds the two ways to name a server's data dir.
func storeFlags(cmd *cobra.Command, dataDir, configPath *string, what string) {
	cmd.Flags().StringVar(dataDir, "data-dir", "", what+" data dir")
	cmd.Flags().StringVar(configPath, "config", "", what+" zoo.cfg (dataDir, server.N lines)")
}

// seed writes st as the first snapshot of cfg's new store and says what it did.
func seed(cmd *cobra.Command, cfg server.Config, st *persistence.State, verb string) error {
	return seedInto(cmd, cfg, persistence.StoreDir(cfg.DataDir), st, verb)
}

// seedInto is seed with the store in dir.
func seedInto(cmd *cobra.Command, cfg server.Config, dir string, st *persistence.State, verb string) error {
	qc := quorum.DefaultConfig(dir)
	qc.Peers = cfg.Servers
	qc.SnapshotRetain = cfg.SnapRetainCount
	if err := quorum.Seed(qc, st); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %d znodes and %d sessions up to zxid 0x%x into %s\n",
		verb, st.Tree.NodeCount()-1, st.Sessions.Len(), st.Zxid, cfg.DataDir)
	return nil
}

func newImportCommand() *cobra.Command {
	var from, fromLogs, configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "import --from-zookeeper ZKDATADIR [--zookeeper-log-dir ZKLOGDIR] (--data-dir DIR | --config zoo.cfg)",
		Short: "Seed a new zkraft data dir from an Apache ZooKeeper 3.x data dir",
		Long: "Read a stopped ZooKeeper's data dir (its newest valid snapshot and the transaction logs\n" +
			"after it, in its dataLogDir if it had one) and seed a new zkraft data dir with the same\n" +
			"tree, ACLs, stats, zxids and sessions (with the passwords ZooKeeper gave them, so clients\n" +
			"can reconnect). For a cluster, import into every member's data dir with that member's\n" +
			"zoo.cfg.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := serverConfig(configPath, dataDir)
			if err != nil {
				return err
			}
			zst, err := persistence.ReadZooKeeper(from, fromLogs)
			if err != nil {
				return err
			}
			if zst.LogFiles == 0 && fromLogs == "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: no transaction log (log.*) beside %s, so the state is that snapshot's "+
					"(zxid 0x%x). That is all there is of a snapshot from the AdminServer's snapshot command or zkraft export; "+
					"but if ZooKeeper kept its logs in a dataLogDir (the official image's /datalog), the writes after the "+
					"snapshot are there: import into a new data dir again with --zookeeper-log-dir.\n",
					zst.Snapshot, zst.LastZxid)
			}
			opts := datatree.Options{ExtendedTypes: cfg.ExtendedTypes, Emulate353TTL: cfg.Emulate353TTLNodes}
			if n := zst.KillDeadSessions(opts); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d ephemeral nodes of sessions that had ended are left out, as ZooKeeper "+
					"deletes them when it loads its data\n", n)
			}
			st, err := zst.ToState(opts)
			if err != nil {
				return err
			}
			return seed(cmd, cfg, st, "imported")
		},
	}
	cmd.Flags().StringVar(&from, "from-zookeeper", "", "the ZooKeeper data dir (holding version-2/)")
	cmd.MarkFlagRequired("from-zookeeper")
	cmd.Flags().StringVar(&fromLogs, "zookeeper-log-dir", "", "ZooKeeper's dataLogDir, if it kept its transaction logs apart from its data dir")
	storeFlags(cmd, &dataDir, &configPath, "the new zkraft member's")
	return cmd
}

func newExportCommand() *cobra.Command {
	var to, configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "export --to-zookeeper DIR (--data-dir DIR | --config zoo.cfg)",
		Short: "Write a stopped zkraft server's state as a ZooKeeper snapshot ZooKeeper 3.8 starts from",
		Long: "Write DIR/version-2/snapshot.<zxid> from a stopped zkraft server's store (its newest\n" +
			"snapshot and the log after it), so a migration can be rolled back: start ZooKeeper with\n" +
			"dataDir=DIR. Export from a standalone server or from the last leader of a cluster.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := serverConfig(configPath, dataDir)
			if err != nil {
				return err
			}
			st, err := quorum.LoadOffline(persistence.StoreDir(cfg.DataDir), datatree.Options{ExtendedTypes: cfg.ExtendedTypes, Emulate353TTL: cfg.Emulate353TTLNodes})
			if err != nil {
				return err
			}
			dir := filepath.Join(to, "version-2")
			if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
				return fmt.Errorf("%s is not empty: export into a new ZooKeeper data dir", dir)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(dir, persistence.SnapshotFileName(st.Zxid))
			f, err := os.Create(path)
			if err != nil {
				return err
			}
			nodes, ttl, err := persistence.WriteStateAsZooKeeper(f, st)
			if err != nil {
				f.Close()
				return err
			}
			if err := f.Sync(); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "exported %d znodes and %d sessions at zxid 0x%x to %s\n",
				nodes, st.Sessions.Len(), st.Zxid, path)
			if n := ttl; n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d TTL nodes: start ZooKeeper with -Dzookeeper.extendedTypesEnabled=true, "+
					"or it takes them for ephemerals of a session that is gone and deletes them as it starts\n", n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to-zookeeper", "", "the new ZooKeeper data dir")
	cmd.MarkFlagRequired("to-zookeeper")
	storeFlags(cmd, &dataDir, &configPath, "the stopped zkraft server's")
	return cmd
}

func newRestoreCommand() *cobra.Command {
	var from, configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "restore --from BACKUP (--data-dir DIR | --config zoo.cfg)",
		Short: "Seed a new data dir from a backup (a copy of a stopped server's data dir)",
		Long: "Load the state a backup holds (its newest snapshot and the log after it) and seed a new\n" +
			"data dir with it. To restore a cluster, run it for every member with that member's\n" +
			"zoo.cfg; the members' configuration, not the backup's, becomes the membership.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := serverConfig(configPath, dataDir)
			if err != nil {
				return err
			}
			st, err := quorum.LoadOffline(persistence.StoreDir(from), datatree.Options{ExtendedTypes: cfg.ExtendedTypes, Emulate353TTL: cfg.Emulate353TTLNodes})
			if err != nil {
				return err
			}
			return seed(cmd, cfg, st, "restored")
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "the backup: a copy of a stopped server's data dir")
	cmd.MarkFlagRequired("from")
	storeFlags(cmd, &dataDir, &configPath, "the new server's")
	return cmd
}

func newBackupCommand() *cobra.Command {
	var to, configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "backup --to DIR (--data-dir DIR | --config zoo.cfg)",
		Short: "Copy a server's newest snapshot, while it runs, into a backup dir",
		Long: "Copy the newest finished snapshot of a (running or stopped) server into DIR, checked\n" +
			"against its CRC. The backup holds the state as of that snapshot; `zkraft restore --from DIR`\n" +
			"seeds new servers from it. A copy of a stopped member's whole data dir also includes the\n" +
			"log after the snapshot (docs/operations.md).",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := serverConfig(configPath, dataDir)
			if err != nil {
				return err
			}
			index, err := persistence.BackupSnapshot(cfg.DataDir, to)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "backed up the snapshot at zxid 0x%x into %s\n", index, to)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the backup dir (restore reads it with --from)")
	cmd.MarkFlagRequired("to")
	storeFlags(cmd, &dataDir, &configPath, "the server's")
	return cmd
}
