package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

func TestZooCfgKeysWarningsAndErrors(t *testing.T) {
	cfg := server.DefaultConfig()
	warnings, err := parseZooCfg(strings.NewReader(`
# a comment
tickTime=500
clientPort = 2999
dataDir=/tmp/x
4lw.commands.whitelist=ruok, srvr
extendedTypesEnabled=false
initLimit=10
someFutureKey=1
server.1=a:2888:3888
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != 500*time.Millisecond || cfg.ClientPort != 2999 || cfg.DataDir != "/tmp/x" ||
		cfg.ExtendedTypes || strings.Join(cfg.FourLetterWhitelist, ",") != "ruok,srvr" {
		t.Fatalf("parsed %+v", cfg)
	}
	joined := strings.Join(warnings, "\n")
	for _, key := range []string{"initLimit", "someFutureKey", "server.1"} {
		if !strings.Contains(joined, key) {
			t.Errorf("no warning names %s: %q", key, warnings)
		}
	}
	if _, err := parseZooCfg(strings.NewReader("tickTime=soon\n"), &cfg); err == nil || !strings.Contains(err.Error(), "tickTime") {
		t.Fatalf("bad value: %v", err)
	}
}
