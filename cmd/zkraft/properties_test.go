package main

import (
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/server"
)

// ZooKeeper reads zoo.cfg with java.util.Properties: a blank separates a key from its
// value, a key may stand alone, a backslash at the end of a line goes on on the next,
// escapes are decoded, and a key given twice has its last value. ZooKeeper 3.8 started
// on the first four lines; zkraft refused "tickTime 3000" and the bare key.
func TestZooCfgIsReadAsJavaProperties(t *testing.T) {
	cfg := server.DefaultConfig()
	warnings, err := parseZooCfg(strings.NewReader(`tickTime 3000
someKeyAlone
maxClientCnxns : 7
4lw.commands.whitelist=stat, \
    ruok
dataDir=/tmp/a\u0062
clientPort=2999
clientPort=3000
`), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TickTime != 3*time.Second || cfg.MaxClientCnxns != 7 || cfg.DataDir != "/tmp/ab" || cfg.ClientPort != 3000 ||
		strings.Join(cfg.FourLetterWhitelist, ",") != "stat,ruok" {
		t.Fatalf("parsed %+v", cfg)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "someKeyAlone") {
		t.Fatalf("warnings %q", warnings)
	}
	if _, err := parseZooCfg(strings.NewReader("dataDir=/tmp/\\u00zz\n"), &cfg); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("malformed escape: %v", err)
	}
}
