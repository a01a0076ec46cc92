// Command zkraft is a ZooKeeper-compatible coordination server.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "zkraft:", err)
		code, line := exitCode(err)
		if line != "" {
			fmt.Fprintln(os.Stderr, line)
		}
		os.Exit(code)
	}
}
