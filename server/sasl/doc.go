// Package sasl owns ZooKeeper's server side of SASL: the JAAS login configuration file
// (jaas.go) whose Server section lists the DIGEST-MD5 users, and the DIGEST-MD5
// mechanism of RFC 2831 as Java's SaslServer runs it for ZooKeeper (digest.go): realm
// "zk-sasl-md5", service "zookeeper", qop auth only, charset utf-8, md5-sess. The
// server package carries the tokens in SetSASL requests and replies and gives the
// connection the resulting "sasl" identity.
//
// GSSAPI (Kerberos) is not implemented: a JAAS Server section that needs it is refused
// at startup, and a client that tries it fails as any failed SASL exchange does.
package sasl
