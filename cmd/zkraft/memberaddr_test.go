package main

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zkraft/zkraft/server"
)

// A member serves clients at the address its own server line names after ';', as
// ZooKeeper's setupClientPort does (a 3.5+ zoo.cfg often has no clientPort); zkraft
// served 2181 whatever the line said. A clientPort that disagrees is refused, as
// ZooKeeper 3.8 refuses it ("client address for this server ... is different").
func TestMemberClientAddressFromServerLine(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(extra, own string) (server.Config, error) {
		path := filepath.Join(dir, "zoo.cfg")
		text := "dataDir=" + dir + "\n" + extra + "server.1=a:2888:3888;2181\nserver.2=b:2888:3888;" + own + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := loadConfig(newStartCommand(), path, envOf(nil), &server.Config{}, nil)
		return cfg, err
	}
	for _, c := range []struct{ extra, own, addr string }{
		{"", "2182", ":2182"},
		{"", "127.0.0.1:2182", "127.0.0.1:2182"},
		{"clientPort=2182\n", "2182", ":2182"},
		{"clientPort=2182\nclientPortAddress=0.0.0.0\n", "127.0.0.1:2182", "127.0.0.1:2182"},
	} {
		cfg, err := load(c.extra, c.own)
		if err != nil {
			t.Fatalf("%q %q: %v", c.extra, c.own, err)
		}
		if got := net.JoinHostPort(cfg.ClientPortAddress, strconv.Itoa(cfg.ClientPort)); got != c.addr {
			t.Errorf("%q %q: serves %s, want %s", c.extra, c.own, got, c.addr)
		}
	}
	for _, extra := range []string{"clientPort=2181\n", "clientPort=2182\nclientPortAddress=127.0.0.1\n"} {
		if _, err := load(extra, "2182"); err == nil || !strings.Contains(err.Error(), "server.2") {
			t.Errorf("%q: %v", extra, err)
		}
	}
}

// ZooKeeper takes server.N=0.0.0.0:... on member N itself (each ZooKeeper member dials
// from its own zoo.cfg); zkraft's members share the membership the first leader wrote,
// so the wildcard reached every member's own address when it dialed N, and the start is
// refused instead. zkraft started, and /zookeeper/config showed server.3=0.0.0.0:...
func TestWildcardMemberAddressRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "myid"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, self := range []string{"0.0.0.0", "[::]"} {
		path := filepath.Join(dir, "zoo.cfg")
		text := "dataDir=" + dir + "\nserver.1=" + self + ":2888:3888\nserver.2=b:2888:3888\nserver.3=c:2888:3888\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := loadConfig(newStartCommand(), path, envOf(nil), &server.Config{}, nil); err == nil || !strings.Contains(err.Error(), "server.1") {
			t.Errorf("%s: %v", self, err)
		}
	}
}
