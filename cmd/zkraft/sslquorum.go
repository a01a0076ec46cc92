package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zkraft/zkraft/server"
)

// quorumSSLKeys are ZooKeeper's keys of TLS between members. Each ssl.quorum.* key is
// also taken as zookeeper.ssl.quorum.*, its Java system property (-D in JVMFLAGS).
var quorumSSLKeys = map[string]func(c *server.Config, v string) error{
	"sslQuorum":                                  configBool(func(c *server.Config, b bool) { c.QuorumSSL.Enabled = b }),
	"portUnification":                            configBool(func(c *server.Config, b bool) { c.QuorumSSL.PortUnification = b }),
	"ssl.quorum.keyStore.location":               stringKey(func(c *server.Config, v string) { c.QuorumSSL.KeyStoreLocation = v }),
	"ssl.quorum.keyStore.password":               stringKey(func(c *server.Config, v string) { c.QuorumSSL.KeyStorePassword = v }),
	"ssl.quorum.keyStore.passwordPath":           stringKey(func(c *server.Config, v string) { c.QuorumSSL.KeyStorePasswordPath = v }),
	"ssl.quorum.keyStore.type":                   stringKey(func(c *server.Config, v string) { c.QuorumSSL.KeyStoreType = v }),
	"ssl.quorum.trustStore.location":             stringKey(func(c *server.Config, v string) { c.QuorumSSL.TrustStoreLocation = v }),
	"ssl.quorum.trustStore.password":             stringKey(func(c *server.Config, v string) { c.QuorumSSL.TrustStorePassword = v }),
	"ssl.quorum.trustStore.passwordPath":         stringKey(func(c *server.Config, v string) { c.QuorumSSL.TrustStorePasswordPath = v }),
	"ssl.quorum.trustStore.type":                 stringKey(func(c *server.Config, v string) { c.QuorumSSL.TrustStoreType = v }),
	"ssl.quorum.protocol":                        stringKey(func(c *server.Config, v string) { c.QuorumSSL.Protocol = v }),
	"ssl.quorum.enabledProtocols":                stringKey(func(c *server.Config, v string) { c.QuorumSSL.EnabledProtocols = commaList(v) }),
	"ssl.quorum.ciphersuites":                    stringKey(func(c *server.Config, v string) { c.QuorumSSL.CipherSuites = commaList(v) }),
	"ssl.quorum.hostnameVerification":            propertyBool(func(c *server.Config, b bool) { c.QuorumSSL.HostnameVerification = b }),
	"ssl.quorum.clientAuth":                      stringKey(func(c *server.Config, v string) { c.QuorumSSL.ClientAuth = v }),
	"ssl.quorum.handshakeDetectionTimeoutMillis": msKey(func(c *server.Config, d time.Duration) { c.QuorumSSL.HandshakeTimeout = d }),
	// Revocation checks and a custom SSLContext are not built: asking for them is an
	// error, never a member accepted on weaker checks than the operator meant.
	"ssl.quorum.crl":  offOnly("certificate revocation lists are not checked by zkraft"),
	"ssl.quorum.ocsp": offOnly("OCSP is not checked by zkraft"),
	"ssl.quorum.context.supplier.class": func(*server.Config, string) error {
		return fmt.Errorf("zkraft builds its TLS from the ssl.quorum keys only")
	},
}

// quorumSSLSetter finds the setter of a key of TLS between members. A key under
// ssl.quorum. that zkraft does not know is an error, not a warning: ignoring it could
// leave members less checked than the operator meant.
func quorumSSLSetter(key string) (set func(*server.Config, string) error, ok bool, err error) {
	name := strings.TrimPrefix(key, "zookeeper.")
	if set, ok := quorumSSLKeys[name]; ok && (name == key || strings.HasPrefix(name, "ssl.quorum.")) {
		return set, true, nil
	}
	if strings.HasPrefix(name, "ssl.quorum.") {
		return nil, false, fmt.Errorf("%s is not supported by zkraft; a TLS setting between members is not ignored", key)
	}
	return nil, false, nil
}

func stringKey(set func(*server.Config, string)) func(*server.Config, string) error {
	return func(c *server.Config, v string) error { set(c, v); return nil }
}

// offOnly accepts a boolean key that is off: ZooKeeper reads it with ZKConfig.getBoolean
// (Boolean.parseBoolean), so anything but "true" is off.
func offOnly(why string) func(*server.Config, string) error {
	return func(_ *server.Config, v string) error {
		if strings.EqualFold(v, "true") {
			return errors.New(why)
		}
		return nil
	}
}

func commaList(v string) []string {
	var list []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	return list
}
