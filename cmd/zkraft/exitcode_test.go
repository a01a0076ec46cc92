package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/zkraft/zkraft/server"
)

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{configError{errors.New("line 3: tickTime: not an integer")}, 2},
		{fmt.Errorf("start: %w", configError{errors.New("x")}), 2},
		{fmt.Errorf("%w /d/zkraft, automatic data directory creation is disabled", server.ErrMissingDataDir), 3},
		{errors.New("listen tcp :2181: address already in use"), 1},
	} {
		if code, line := exitCode(c.err); code != c.code || (code != 1) != (line != "") {
			t.Errorf("%v: exit code %d %q, want %d", c.err, code, line, c.code)
		}
	}
}
