package main

import (
	"errors"

	"github.com/zkraft/zkraft/server"
)

// configError marks a start that failed on its configuration (ZooKeeper's
// ConfigException).
type configError struct{ error }

func (e configError) Unwrap() error { return e.error }

// exitCode is the code zkraft exits with after err, and the line it prints after the
// error, as ZooKeeper's main classes exit (their ExitCode): 2 for a configuration it
// cannot use, 3 for a data dir it cannot use, 1 for anything else.
func exitCode(err error) (int, string) {
	switch {
	case errors.Is(err, server.ErrMissingDataDir):
		return 3, "Unable to access datadir, exiting abnormally"
	case errors.As(err, new(configError)):
		return 2, "Invalid config, exiting abnormally"
	}
	return 1, ""
}
