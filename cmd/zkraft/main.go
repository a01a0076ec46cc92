// Command zkraft is a ZooKeeper-compatible coordination server.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "zkraft:", err)
		os.Exit(1)
	}
}
