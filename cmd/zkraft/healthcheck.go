package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newHealthcheckCommand() *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "healthcheck",
		Short: "Exit 0 when the local server is ready (in a quorum and caught up), 1 otherwise",
		Long:  "Asks the admin server's /ready, for a container's health check.",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := http.Client{Timeout: 3 * time.Second}
			resp, err := c.Get(url)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("not ready: %s", strings.TrimSpace(string(body)))
			}
			fmt.Fprint(cmd.OutOrStdout(), string(body))
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "http://127.0.0.1:8080/ready", "the admin server's readiness URL")
	return cmd
}
