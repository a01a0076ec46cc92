package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/server"
	"github.com/zkraft/zkraft/server/tlsconf"
)

// The client port's TLS keys. ZooKeeper reads secureClientPort and
// secureClientPortAddress from zoo.cfg only; every other key here it reads as a system
// property named "zookeeper." + key, which a zoo.cfg key becomes too
// (QuorumPeerConfig.parseProperties), so each is taken in both spellings, in zoo.cfg
// and as -D in JVMFLAGS.

const (
	nettyFactory       = "org.apache.zookeeper.server.NettyServerCnxnFactory"
	nioFactory         = "org.apache.zookeeper.server.NIOServerCnxnFactory"
	x509ProviderClass  = "org.apache.zookeeper.server.auth.X509AuthenticationProvider"
	x509SuperUserKey   = "X509AuthenticationProvider.superUser"
	portUnificationKey = "client.portUnification"
	certReloadKey      = "client.certReload"
)

// tlsKey returns the setter of a TLS key, in either spelling.
func tlsKey(key string) (func(*server.Config, string) error, bool) {
	switch key {
	case "secureClientPort":
		return intKey(func(c *server.Config, n int) { c.SecureClientPort = n }), true
	case "secureClientPortAddress":
		return func(c *server.Config, v string) error { c.SecureClientPortAddress = v; return nil }, true
	// Revocation checks and a custom SSLContext are not built for clients either: asking
	// for them stops the start, as between members (sslquorum.go), rather than take
	// clients on weaker checks than the operator meant.
	case "ssl.crl", "zookeeper.ssl.crl":
		return offOnly("certificate revocation lists are not checked by zkraft"), true
	case "ssl.ocsp", "zookeeper.ssl.ocsp":
		return offOnly("OCSP is not checked by zkraft"), true
	case "ssl.context.supplier.class", "zookeeper.ssl.context.supplier.class":
		return func(*server.Config, string) error {
			return errors.New("zkraft builds its TLS from the ssl keys only")
		}, true
	}
	if !tlsSystemProperty("zookeeper." + key) {
		if !tlsSystemProperty(key) {
			return nil, false
		}
		key = strings.TrimPrefix(key, "zookeeper.")
	}
	switch {
	case key == certReloadKey:
		return propertyBool(func(c *server.Config, b bool) { c.CertReload = b }), true
	case key == portUnificationKey:
		return propertyBool(func(c *server.Config, b bool) { c.PortUnification = b }), true
	case key == "serverCnxnFactory":
		return func(c *server.Config, v string) error {
			if v != nettyFactory && v != nioFactory {
				return fmt.Errorf("%q is not %s or %s", v, nettyFactory, nioFactory)
			}
			// zkraft has one connection factory and serves TLS either way; with Netty's
			// named it counts plain connections as that one does (server/tls_guard.go).
			c.NettyFactory = v == nettyFactory
			return nil
		}, true
	case key == "ssl.authProvider":
		return func(c *server.Config, v string) error {
			if v != "x509" {
				return fmt.Errorf("zkraft authenticates TLS clients with the x509 scheme only, not %q", v)
			}
			return nil
		}, true
	case key == x509SuperUserKey:
		return func(c *server.Config, v string) error { c.X509SuperUser = v; return nil }, true
	case strings.HasPrefix(key, "authProvider."):
		return func(c *server.Config, v string) error {
			if v != x509ProviderClass {
				return fmt.Errorf("zkraft has no authentication provider %s", v)
			}
			c.X509Provider = true
			return nil
		}, true
	}
	return func(c *server.Config, v string) error {
		if c.SSL == nil {
			c.SSL = map[string]string{}
		}
		c.SSL[key] = v
		return nil
	}, true
}

// tlsSystemProperty reports whether name is a system property of the client port's
// TLS that zkraft reads.
func tlsSystemProperty(name string) bool {
	key, ok := strings.CutPrefix(name, "zookeeper.")
	if !ok {
		return false
	}
	switch key {
	case portUnificationKey, certReloadKey, "serverCnxnFactory", "ssl.authProvider", x509SuperUserKey, "authProvider.x509",
		"ssl.crl", "ssl.ocsp", "ssl.context.supplier.class":
		return true
	}
	if k, ok := strings.CutPrefix(key, "ssl."); ok {
		for _, known := range tlsconf.Keys {
			if k == known {
				return true
			}
		}
	}
	return false
}
