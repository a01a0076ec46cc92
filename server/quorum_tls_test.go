package server

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkraft/zkraft/quorum"
	"github.com/zkraft/zkraft/server/tlsconf/tlstest"
)

// storesFor is a member's QuorumSSL with PEM stores: its key store from ca for ips,
// trusting trust.
func storesFor(t *testing.T, dir string, ca *tlstest.CA, name string, trust *tlstest.CA, verify bool, ips ...string) QuorumSSL {
	return QuorumSSL{Enabled: true, KeyStoreLocation: memberKeyStore(t, ca, dir, name, ips...),
		TrustStoreLocation: trustPEM(t, trust, dir), HostnameVerification: verify}
}

// handshake runs one stream from dialer to listener over loopback as quorum does
// (ServerName: the dialed host) and returns the first error of either end.
func handshake(t *testing.T, listener, dialer *quorum.TLS) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			served <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		served <- tls.Server(c, listener.Server).Handshake()
	}()
	cfg := dialer.Client.Clone()
	cfg.ServerName = "127.0.0.1"
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", ln.Addr().String(), cfg)
	if err == nil {
		c.Close()
	}
	return errors.Join(err, <-served)
}

func mustTLS(t *testing.T, q QuorumSSL) *quorum.TLS {
	t.Helper()
	tc, err := q.quorumTLS()
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// Hostname verification checks both ends: the listener's certificate must name the
// address dialed, the dialer's the address it dials from. Off, only the chain counts,
// and a certificate from a CA not trusted is still refused.
func TestQuorumSSLHostnameVerification(t *testing.T) {
	dir := t.TempDir()
	ca, rogue := tlstest.NewCA(t, "ca"), tlstest.NewCA(t, "rogue")
	for _, verify := range []bool{true, false} {
		right := mustTLS(t, storesFor(t, dir, ca, "right", ca, verify, "127.0.0.1"))
		wrong := mustTLS(t, storesFor(t, dir, ca, "wrong", ca, verify, "192.0.2.1"))
		untrusted := mustTLS(t, storesFor(t, dir, rogue, "untrusted", ca, verify, "127.0.0.1"))
		if err := handshake(t, right, right); err != nil {
			t.Fatalf("verify %v: members that name their address: %v", verify, err)
		}
		if err := handshake(t, wrong, right); (err == nil) == verify {
			t.Errorf("verify %v: listener's certificate for another address: %v", verify, err)
		}
		if err := handshake(t, right, wrong); (err == nil) == verify {
			t.Errorf("verify %v: dialer's certificate for another address: %v", verify, err)
		}
		if err := handshake(t, untrusted, right); err == nil {
			t.Errorf("verify %v: a listener with an untrusted certificate was accepted", verify)
		}
		if err := handshake(t, right, untrusted); err == nil {
			t.Errorf("verify %v: a dialer with an untrusted certificate was accepted", verify)
		}
	}
}

func TestQuorumSSLSettings(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "ca")
	good := storesFor(t, dir, ca, "m", ca, true, "127.0.0.1")
	tc := mustTLS(t, good)
	if tc.Client == nil || tc.AcceptPlaintext || tc.Server.MinVersion != tls.VersionTLS12 || tc.Server.MaxVersion != tls.VersionTLS12 {
		t.Fatalf("defaults: %+v %+v", tc, tc.Server)
	}
	unify := good
	unify.Enabled, unify.PortUnification = false, true
	if tc := mustTLS(t, unify); tc.Client != nil || !tc.AcceptPlaintext {
		t.Fatalf("portUnification alone: %+v", tc)
	}
	if tc, err := (&QuorumSSL{}).quorumTLS(); tc != nil || err != nil {
		t.Fatalf("off: %v %v", tc, err)
	}
	newer := good
	newer.EnabledProtocols = []string{"TLSv1.3", "TLSv1.2"}
	newer.CipherSuites = []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
	if tc := mustTLS(t, newer); tc.Server.MinVersion != tls.VersionTLS12 || tc.Server.MaxVersion != tls.VersionTLS13 ||
		len(tc.Client.CipherSuites) != 1 || tc.Client.CipherSuites[0] != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Fatalf("protocols and suites: %+v", tc.Server)
	}

	// Each bad setting stops the start with an error naming its key. A store's type,
	// given or taken from its name, must be the file's.
	bad := map[string]struct {
		key    string
		change func(q *QuorumSSL)
	}{
		"clientAuth":        {"ssl.quorum.clientAuth", func(q *QuorumSSL) { q.ClientAuth = "want" }},
		"keyStore":          {"ssl.quorum.keyStore.location", func(q *QuorumSSL) { q.KeyStoreLocation = "" }},
		"trustStore":        {"ssl.quorum.trustStore.location", func(q *QuorumSSL) { q.TrustStoreLocation = "" }},
		"TLSv1.4":           {"ssl.quorum protocol", func(q *QuorumSSL) { q.Protocol = "TLSv1.4" }},
		"ciphersuites":      {"ssl.quorum.ciphersuites", func(q *QuorumSSL) { q.CipherSuites = []string{"TLS_NULL_WITH_NULL_NULL"} }},
		"handshake":         {"ssl.quorum.handshakeDetectionTimeoutMillis", func(q *QuorumSSL) { q.HandshakeTimeout = -time.Second }},
		"PKCS12 on PEM key": {"ssl.quorum.keyStore", func(q *QuorumSSL) { q.KeyStoreType = "PKCS12" }},
		"JKS on PEM trust":  {"ssl.quorum.trustStore", func(q *QuorumSSL) { q.TrustStoreType = "JKS" }},
		"BCFKS":             {"ssl.quorum.keyStore", func(q *QuorumSSL) { q.KeyStoreType = "BCFKS" }},
		"no type":           {"ssl.quorum.keyStore", func(q *QuorumSSL) { q.KeyStoreType, q.KeyStoreLocation = "", dir+"/member.crt" }},
	}
	for name, c := range bad {
		q := good
		c.change(&q)
		cfg := DefaultConfig()
		cfg.ServerID, cfg.Servers = 1, []quorum.Peer{{ID: "1", RaftAddr: "127.0.0.1:1", PeerAddr: "127.0.0.1:2"}}
		cfg.QuorumSSL = q
		err := cfg.Validate()
		if err == nil {
			_, err = q.quorumTLS()
		}
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v, want an error naming %s", name, err, c.key)
		}
	}
	// As ZooKeeper, a standalone server ignores sslQuorum.
	cfg := DefaultConfig()
	cfg.QuorumSSL.Enabled = true
	if err := cfg.Validate(); err != nil {
		t.Fatalf("standalone with sslQuorum: %v", err)
	}
}

// Members whose key stores are JKS and trust stores PKCS12, both made by keytool with
// passwords (one read from a file), handshake with each other; a member whose JKS store
// holds a certificate from a CA not trusted is refused whichever end it is, and a wrong
// trust store password stops the start naming the key.
func TestQuorumSSLKeytoolStores(t *testing.T) {
	tlstest.RequireKeytool(t)
	dir := t.TempDir()
	const pw = "changeit1"
	pwFile := tlstest.WriteFile(t, filepath.Join(dir, "password"), []byte(pw+"\n"))
	ca := tlstest.NewCA(t, "ca")
	trust := ca.KeytoolTrustStore(t, dir, filepath.Join(dir, "trust.p12"), "PKCS12", pw)
	member := func(ca *tlstest.CA, name string) QuorumSSL {
		leaf := ca.Issue(t, tlstest.Options{Subject: pkix.Name{CommonName: name}})
		return QuorumSSL{Enabled: true, HostnameVerification: true,
			KeyStoreLocation: leaf.KeytoolKeyStore(t, dir, filepath.Join(dir, name+".jks"), "JKS", pw), KeyStorePasswordPath: pwFile,
			TrustStoreLocation: trust, TrustStorePassword: pw}
	}
	a, b := mustTLS(t, member(ca, "a")), mustTLS(t, member(ca, "b"))
	untrusted := mustTLS(t, member(tlstest.NewCA(t, "rogue"), "untrusted"))
	if err := handshake(t, a, b); err != nil {
		t.Fatalf("JKS and PKCS12 stores: %v", err)
	}
	if err := handshake(t, untrusted, a); err == nil {
		t.Error("a listener with an untrusted certificate was accepted")
	}
	if err := handshake(t, a, untrusted); err == nil {
		t.Error("a dialer with an untrusted certificate was accepted")
	}
	wrong := member(ca, "c")
	wrong.TrustStorePassword = "wrong"
	if _, err := wrong.quorumTLS(); err == nil || !strings.Contains(err.Error(), "ssl.quorum.trustStore") {
		t.Errorf("wrong trust store password: %v", err)
	}
}

// The partition scenario with every stream between members mutual TLS, on PEM stores:
// the cut closes the TLS streams, the majority goes on, and after the heal the old
// leader's new streams handshake and it catches up.
func TestClusterPartitionedLeaderTLS(t *testing.T) {
	dir := t.TempDir()
	ca := tlstest.NewCA(t, "ca")
	stores := storesFor(t, dir, ca, "member", ca, true, "127.0.0.1")
	tc := newTestClusterWith(t, 3, func(c *Config) { c.QuorumSSL = stores })
	for _, p := range tc.cfgs[0].Servers {
		for _, addr := range []string{p.PeerAddr, p.RaftAddr} {
			if err := refusesPlaintext(addr); err != nil {
				t.Fatal(err)
			}
		}
	}
	partitionedLeader(t, tc)
}
