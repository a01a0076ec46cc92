package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

func TestZooCfgKeysWarningsAndErrors(t *testing.T) {
	cfg := server.DefaultConfig()
	if !cfg.ExistsACLCheck {
		t.Fatal("exists must need READ by default, as in ZooKeeper 3.9.2")
	}
	warnings, err := parseZooCfg(strings.NewReader(`
# a comment
tickTime=500
clientPort = 2999
dataDir=/tmp/x
4lw.commands.whitelist=ruok, srvr
extendedTypesEnabled=false
enableExistsACLCheck=false
fsync.warningthresholdms=250
initLimit=10
someFutureKey=1
server.1=a:2888:3888
server.2=b:2889:3889:observer;2181
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != 500*time.Millisecond || cfg.ClientPort != 2999 || cfg.DataDir != "/tmp/x" ||
		cfg.ExtendedTypes || cfg.ExistsACLCheck || strings.Join(cfg.FourLetterWhitelist, ",") != "ruok,srvr" ||
		cfg.FsyncWarning != 250*time.Millisecond || cfg.InitLimit != 10 {
		t.Fatalf("parsed %+v", cfg)
	}
	joined := strings.Join(warnings, "\n")
	if len(cfg.Servers) != 2 || cfg.Servers[0].PeerAddr != "a:2888" || cfg.Servers[0].RaftAddr != "a:3888" ||
		cfg.Servers[0].Observer || !cfg.Servers[1].Observer || cfg.Servers[1].ID != "2" {
		t.Fatalf("servers %+v", cfg.Servers)
	}
	for _, key := range []string{"initLimit", "someFutureKey"} {
		if !strings.Contains(joined, key) {
			t.Errorf("no warning names %s: %q", key, warnings)
		}
	}
	if _, err := parseZooCfg(strings.NewReader("tickTime=soon\n"), &cfg); err == nil || !strings.Contains(err.Error(), "tickTime") {
		t.Fatalf("bad value: %v", err)
	}
}

func TestServerLineErrors(t *testing.T) {
	for _, line := range []string{"server.0=a:1:2", "server.1=a:1", "server.1=a:x:2", "server.1=a:1:2:boss"} {
		cfg := server.DefaultConfig()
		if _, err := parseZooCfg(strings.NewReader(line+"\n"), &cfg); err == nil || !strings.Contains(err.Error(), "server.") {
			t.Errorf("%s: %v", line, err)
		}
	}
}
