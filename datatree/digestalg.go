package datatree

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"strings"
)

// Digester makes a digest ACL id from "user:password", as ZooKeeper's
// DigestAuthenticationProvider.generateDigest does with its digest algorithm.
type Digester func(userColonPassword string) string

// digestHashes are the MessageDigest algorithms of Java's SUN provider by their names
// and aliases (Java looks them up in any case), and their OIDs (with or without
// "OID."), except MD2, which Go lacks.
var digestHashes = map[string]func([]byte) []byte{}

func init() {
	for names, h := range map[string]func([]byte) []byte{
		"SHA-1 SHA1 SHA 1.3.14.3.2.26":                  func(b []byte) []byte { s := sha1.Sum(b); return s[:] },
		"SHA-224 SHA224 2.16.840.1.101.3.4.2.4":         func(b []byte) []byte { s := sha256.Sum224(b); return s[:] },
		"SHA-256 SHA256 2.16.840.1.101.3.4.2.1":         func(b []byte) []byte { s := sha256.Sum256(b); return s[:] },
		"SHA-384 SHA384 2.16.840.1.101.3.4.2.2":         func(b []byte) []byte { s := sha512.Sum384(b); return s[:] },
		"SHA-512 SHA512 2.16.840.1.101.3.4.2.3":         func(b []byte) []byte { s := sha512.Sum512(b); return s[:] },
		"SHA-512/224 SHA512/224 2.16.840.1.101.3.4.2.5": func(b []byte) []byte { s := sha512.Sum512_224(b); return s[:] },
		"SHA-512/256 SHA512/256 2.16.840.1.101.3.4.2.6": func(b []byte) []byte { s := sha512.Sum512_256(b); return s[:] },
		"SHA3-224 2.16.840.1.101.3.4.2.7":               func(b []byte) []byte { s := sha3.Sum224(b); return s[:] },
		"SHA3-256 2.16.840.1.101.3.4.2.8":               func(b []byte) []byte { s := sha3.Sum256(b); return s[:] },
		"SHA3-384 2.16.840.1.101.3.4.2.9":               func(b []byte) []byte { s := sha3.Sum384(b); return s[:] },
		"SHA3-512 2.16.840.1.101.3.4.2.10":              func(b []byte) []byte { s := sha3.Sum512(b); return s[:] },
		"MD5 1.2.840.113549.2.5":                        func(b []byte) []byte { s := md5.Sum(b); return s[:] },
	} {
		for _, n := range strings.Fields(names) {
			digestHashes[n] = h
			if n[0] >= '0' && n[0] <= '9' {
				digestHashes["OID."+n] = h
			}
		}
	}
}

// NewDigester is the digester of zookeeper.DigestAuthenticationProvider.digestAlg, by
// Java's name for the algorithm in any case; "" is ZooKeeper's default, SHA1. An
// algorithm Go has no hash for is an error, as ZooKeeper fails to start without it.
func NewDigester(alg string) (Digester, error) {
	if alg == "" {
		alg = "SHA1"
	}
	h, ok := digestHashes[strings.ToUpper(alg)]
	if !ok {
		return nil, fmt.Errorf("don't support this ACL digest algorithm: %s", alg)
	}
	return func(userColonPassword string) string {
		user, _, _ := strings.Cut(userColonPassword, ":")
		return user + ":" + base64.StdEncoding.EncodeToString(h([]byte(userColonPassword)))
	}, nil
}
