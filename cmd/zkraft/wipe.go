package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/persistence"
)

func newWipeCommand() *cobra.Command {
	var configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "wipe",
		Short: "Move a stopped cluster member's store aside so it is rebuilt from the leader",
		Long: "Move DATADIR/zkraft of a stopped cluster member aside (to zkraft.wiped-<time>; myid\n" +
			"stays). Started again, the member finds the cluster and the leader sends it a snapshot\n" +
			"and the log after it. Use it on a member whose store is damaged. Never on a majority of a\n" +
			"cluster: their stores are the only copies of the data. A standalone server's store (its\n" +
			"cluster's only voter) is refused.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := serverConfig(configPath, dataDir)
			if err != nil {
				return err
			}
			to, err := persistence.Wipe(cfg.DataDir, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "moved the store to %s; start the member to rebuild it from the leader\n", to)
			return nil
		},
	}
	storeFlags(cmd, &dataDir, &configPath, "the member's")
	return cmd
}
