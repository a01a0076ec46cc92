package session

import (
	"encoding/hex"
	"testing"
)

// Values printed by java.util.Random as ZooKeeperServer.generatePasswd uses it (JDK 17).
func TestZooKeeperPassword(t *testing.T) {
	for id, want := range map[int64]string{
		0x1000000abcd0000:  "29c1a79902465990af66c1981b3b90cd",
		0x72d3f0e6b4a00001: "e54373ea97fce8f1f5513a8b6c340ea3",
		-1:                 "20f62cb5648dc2d771471c8a2486a9ee",
	} {
		if got := hex.EncodeToString(ZooKeeperPassword(id)); got != want {
			t.Errorf("%#x: %s, want %s", id, got, want)
		}
	}
}
