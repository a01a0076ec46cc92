package main

import (
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/server"
)

// saslKeys are the keys of SASL and of enforced authentication. ZooKeeper reads them
// as system properties, and its zoo.cfg turns an unknown key k into the property
// zookeeper.k, so each is taken under both names; java.security.auth.login.config
// (a JVM property only, for ZooKeeper) is also a zoo.cfg key of zkraft's.
var saslKeys = map[string]func(c *server.Config, v string) error{
	"java.security.auth.login.config": func(c *server.Config, v string) error { c.SASL.JAASFile = v; return nil },
}

func init() {
	both := map[string]func(c *server.Config, v string) error{
		"sasl.serverconfig": func(c *server.Config, v string) error { c.SASL.Section = v; return nil },
		"superUser":         func(c *server.Config, v string) error { c.SASL.SuperUsers = append(c.SASL.SuperUsers, v); return nil },
		"SASLAuthenticationProvider.superPassword": func(c *server.Config, v string) error { c.SASL.SuperPassword = v; return nil },
		"allowSaslFailedClients":                   propertyBool(func(c *server.Config, b bool) { c.SASL.AllowFailedClients = b }),
		"sessionRequireClientSASLAuth":             propertyBool(func(c *server.Config, b bool) { c.EnforceAuth.RequireClientSASLAuth = b }),
		"enforce.auth.enabled":                     propertyBool(func(c *server.Config, b bool) { c.EnforceAuth.Enabled = b }),
		// AuthenticationHelper splits the value with Java's String.split(","), which
		// drops trailing empty fields ("sasl," is one scheme), and trims each scheme;
		// an empty one inside the list is a scheme that is not available.
		"enforce.auth.schemes": func(c *server.Config, v string) error {
			schemes := strings.Split(v, ",")
			for len(schemes) > 0 && schemes[len(schemes)-1] == "" {
				schemes = schemes[:len(schemes)-1]
			}
			c.EnforceAuth.Schemes = nil
			for _, s := range schemes {
				c.EnforceAuth.Schemes = append(c.EnforceAuth.Schemes, strings.TrimSpace(s))
			}
			return nil
		},
	}
	for k, set := range both {
		saslKeys[k], saslKeys["zookeeper."+k] = set, set
	}
}

// isSASLProperty is whether name is one of saslKeys' system properties, or one ZooKeeper
// reads by prefix (prefixedAuthKey).
func isSASLProperty(name string) bool {
	if name == "java.security.auth.login.config" {
		return true
	}
	rest, ok := strings.CutPrefix(name, "zookeeper.")
	return ok && (saslKeys[name] != nil || strings.HasPrefix(rest, "authProvider.") || strings.HasPrefix(rest, "superUser."))
}

// The authentication providers ZooKeeper 3.8 has; ip and digest are registered without
// a key (digest unless DigestAuthenticationProvider.enabled is false).
const (
	saslProviderClass   = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
	digestProviderClass = "org.apache.zookeeper.server.auth.DigestAuthenticationProvider"
	// ensembleProviderClass checks the name a client gives with addauth ensemble
	// against ensembleAuthName (server/ensemble_auth.go).
	ensembleProviderClass = "org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider"
	ipProviderClass       = "org.apache.zookeeper.server.auth.IPAuthenticationProvider"
)

// prefixedAuthKey takes the keys ZooKeeper reads by prefix: authProvider.<anything>
// (a provider class to register) and zookeeper.superUser.<anything> (another SASL super
// user). handled is false for any other key. A provider zkraft does not have is a
// warning, as ZooKeeper logs one for a class it cannot load and goes on.
// (authProvider.x509 is read with the TLS keys, tlscfg.go.)
func prefixedAuthKey(c *server.Config, key, val string) (handled bool, warning string) {
	key = strings.TrimPrefix(key, "zookeeper.")
	switch {
	case strings.HasPrefix(key, "superUser."):
		c.SASL.SuperUsers = append(c.SASL.SuperUsers, val)
		return true, ""
	case !strings.HasPrefix(key, "authProvider."):
		return false, ""
	}
	switch val {
	case saslProviderClass:
		c.SASL.AuthProvider = true
	case x509ProviderClass:
		// ProviderRegistry keys a provider by its scheme, whatever the key's N: the
		// x509 scheme is registered as by authProvider.x509.
		c.X509Provider = true
	case ensembleProviderClass:
		c.EnsembleProvider = true
	case digestProviderClass, ipProviderClass:
	default:
		return true, fmt.Sprintf("%s: authentication provider %s is not one zkraft has and is ignored", key, val)
	}
	return true, ""
}
