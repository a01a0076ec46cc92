package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/zkraft/zkraft/server"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "zkraft",
		Short:         "A ZooKeeper-compatible coordination server on Raft",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newStartCommand(), newVersionCommand(), newWipeCommand(), newSnapshotCommand(), newLogCommand(), newImportCommand(), newExportCommand(), newRestoreCommand(), newBackupCommand(), newHealthcheckCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), server.Version)
		},
	}
}
