package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/persistence"
	"github.com/zkraft/zkraft/server"
)

func newWipeCommand() *cobra.Command {
	var configPath, dataDir string
	cmd := &cobra.Command{
		Use:   "wipe",
		Short: "Move a stopped cluster member's store aside so it is rebuilt from the leader",
		Long: "Move DATADIR/zkraft of a stopped cluster member aside (to zkraft.wiped-<time>; myid\n" +
			"stays). Started again, the member finds the cluster and the leader sends it a snapshot\n" +
			"and the log after it. Use it on a member whose store is damaged. Never on a standalone\n" +
			"server or on a majority of a cluster: their store is the only copy of the data.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dataDir == "" && configPath != "" {
				f, err := os.Open(configPath)
				if err != nil {
					return err
				}
				cfg := server.DefaultConfig()
				_, err = parseZooCfg(f, &cfg)
				f.Close()
				if err != nil {
					return fmt.Errorf("%s: %v", configPath, err)
				}
				dataDir = cfg.DataDir
			}
			if dataDir == "" {
				return errors.New("give --data-dir or --config")
			}
			to, err := persistence.Wipe(dataDir, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "moved the store to %s; start the member to rebuild it from the leader\n", to)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the member's data dir")
	cmd.Flags().StringVar(&configPath, "config", "", "the member's zoo.cfg (for its dataDir)")
	return cmd
}
