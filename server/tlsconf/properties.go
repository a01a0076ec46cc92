package tlsconf

import (
	"strings"
)

// Keys are the names FromProperties reads after its prefix (ZooKeeper's X509Util
// property names without "zookeeper.ssl." or "zookeeper.ssl.quorum.").
var Keys = []string{
	"keyStore.location", "keyStore.password", "keyStore.passwordPath", "keyStore.type",
	"trustStore.location", "trustStore.password", "trustStore.passwordPath", "trustStore.type",
	"protocol", "enabledProtocols", "ciphersuites", "clientAuth", "hostnameVerification",
}

// FromProperties reads Settings from key/values named prefix+key (prefix "ssl." for the
// client port, "ssl.quorum." between members), with ZooKeeper's defaults for missing
// keys. Lists are comma-separated; booleans are true only for "true" in any case, as
// Java's Boolean.parseBoolean.
func FromProperties(props map[string]string, prefix string) (Settings, error) {
	s := DefaultSettings()
	get := func(k string) (string, bool) {
		v, ok := props[prefix+k]
		return strings.TrimSpace(v), ok
	}
	s.KeyStore = store(get, "keyStore.")
	s.TrustStore = store(get, "trustStore.")
	if v, ok := get("protocol"); ok && v != "" {
		s.Protocol = v
	}
	if v, ok := get("enabledProtocols"); ok && v != "" {
		s.EnabledProtocols = strings.Split(v, ",")
	}
	if v, ok := get("ciphersuites"); ok && v != "" {
		s.CipherSuites = strings.Split(v, ",")
	}
	if v, ok := get("hostnameVerification"); ok {
		s.HostnameVerification = strings.EqualFold(v, "true")
	}
	v, _ := get("clientAuth")
	var err error
	if s.ClientAuth, err = ParseClientAuth(v); err != nil {
		return s, err
	}
	return s, s.Validate()
}

func store(get func(string) (string, bool), prefix string) Store {
	var st Store
	st.Location, _ = get(prefix + "location")
	st.Password, _ = get(prefix + "password")
	st.PasswordPath, _ = get(prefix + "passwordPath")
	st.Type, _ = get(prefix + "type")
	return st
}
