package e2e

import (
	"os"
	"testing"

	"github.com/zkraft/zkraft/server/ztest"
)

// TestMain removes the zkraft binary the tests built once they have run.
func TestMain(m *testing.M) {
	code := m.Run()
	ztest.RemoveBuilt()
	os.Exit(code)
}
