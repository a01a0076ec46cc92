// Package tlsconf owns turning ZooKeeper's TLS settings into a *tls.Config: the key and
// trust stores (PEM, PKCS12 and JKS files, their type named or taken from the file's
// extension as ZooKeeper's KeyStoreFileType does, with a password given inline or in a
// file), client authentication (none, want, need), the protocol and enabled protocols,
// Java cipher suite names, peer hostname verification, and reloading the stores when
// their files change.
//
// Settings carries no key prefix: the same code serves ZooKeeper's ssl.* keys (the
// client port) and ssl.quorum.* keys (members). FromProperties reads either from a map
// of key/values given the prefix.
package tlsconf
