package sasl

import (
	"fmt"
	"strings"
)

// DigestLoginModule is the login module class of ZooKeeper's DIGEST-MD5 users.
const DigestLoginModule = "org.apache.zookeeper.server.auth.DigestLoginModule"

// DefaultSection is the JAAS section ZooKeeper's server reads unless
// zookeeper.sasl.serverconfig names another.
const DefaultSection = "Server"

// Users are the DIGEST-MD5 users of a server section: name to password.
type Users map[string]string

// ServerUsers returns the users of section: every user_<name>="<password>" option of
// its modules, as ZooKeeper's SaslServerCallbackHandler collects them. found is false
// when the section is absent (ZooKeeper then runs without SASL). A module other than
// DigestLoginModule is an error: ZooKeeper would log in with it at startup, and the
// only other one in use, Kerberos' Krb5LoginModule, means GSSAPI, which zkraft does not
// implement.
func (j JAAS) ServerUsers(section string) (users Users, found bool, err error) {
	mods, ok := j[section]
	if !ok {
		return nil, false, nil
	}
	users = Users{}
	for _, m := range mods {
		if m.Class != DigestLoginModule {
			return nil, true, fmt.Errorf("JAAS section %s: login module %s is not supported: zkraft authenticates SASL clients with DIGEST-MD5 only (%s)", section, m.Class, DigestLoginModule)
		}
		for k, v := range m.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok {
				users[name] = v
			}
		}
	}
	return users, true, nil
}
