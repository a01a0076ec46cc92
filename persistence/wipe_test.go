package persistence

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// Wipe refuses the store of a server that is its cluster's only voter (a standalone
// server): no leader would rebuild it, and it is all there is of the data. Before, it
// moved it aside like a member's, and the server then started with an empty tree. The
// configuration counts whether it is in the log or in the newest snapshot, and whether
// or not the log can be read (a damaged store is what wipe is for); a cluster member's
// store is moved.
func TestWipeRefusesTheOnlyVoter(t *testing.T) {
	conf := func(voters int) raft.Configuration {
		var c raft.Configuration
		for i := 1; i <= voters; i++ {
			c.Servers = append(c.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(fmt.Sprint(i)), Address: raft.ServerAddress(fmt.Sprintf("host%d:2888", i))})
		}
		return c
	}
	for _, tc := range []struct {
		name       string
		voters     int
		inSnapshot bool // else in the log
		damaged    bool // a flipped bit in the log
		wiped      bool
	}{
		{"standalone, configuration in the log", 1, false, false, false},
		{"member of three, configuration in the log", 3, false, false, true},
		{"standalone, configuration in the snapshot, damaged log", 1, true, true, false},
		{"member of three, configuration in the snapshot, damaged log", 3, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := t.TempDir()
			s, err := openStore(t, StoreDir(data))
			if err != nil {
				t.Fatal(err)
			}
			if tc.inSnapshot {
				_, peers := raft.NewInmemTransport("") // encodes the snapshot's old peers field
				sink, err := s.Snapshots.Create(raft.SnapshotVersionMax, 10, 1, conf(tc.voters), 10, peers)
				if err != nil {
					t.Fatal(err)
				}
				sink.Write([]byte("state"))
				if err := sink.Close(); err != nil {
					t.Fatal(err)
				}
				fill(t, s, 11, 20)
			} else {
				c := &raft.Log{Index: 1, Term: 1, Type: raft.LogConfiguration, Data: raft.EncodeConfiguration(conf(tc.voters))}
				if err := s.Log.StoreLogs([]*raft.Log{c}); err != nil {
					t.Fatal(err)
				}
				fill(t, s, 2, 20)
			}
			s.Close()
			if tc.damaged {
				seg := WALDir(StoreDir(data)) + "/" + segmentName(1)
				b, _ := os.ReadFile(seg)
				i := strings.Index(string(b), "payload-000012")
				b[i+3] ^= 0x10
				os.WriteFile(seg, b, 0o644)
			}
			to, err := Wipe(data, time.Now())
			if tc.wiped {
				if err != nil || !exists(to) || exists(StoreDir(data)) {
					t.Fatalf("a member's store not moved: %q, %v", to, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "only voter") || !exists(StoreDir(data)) {
				t.Fatalf("the only voter's store: moved to %q, %v", to, err)
			}
		})
	}
}
