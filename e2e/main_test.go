package e2e

import (
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestMain removes the zkraft binary the tests built once they have run.
func TestMain(m *testing.M) { ztest.Main(m) }
