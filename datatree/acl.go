package datatree

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"

	"github.com/zkraft/zkraft/jute"
)

// Caller is who performs an operation.
type Caller struct {
	Session int64     // session id (owner of the ephemerals it creates)
	Ids     []jute.Id // authenticated identities, e.g. {"ip","127.0.0.1"}, {"digest","user:BASE64SHA1"}
	Super   bool      // super user: every ACL check passes
}

// provider is the part of ZooKeeper's ServerAuthenticationProvider the tree needs.
type provider struct {
	authenticated bool // isAuthenticated: may stand for "auth" in an ACL
	valid         func(id string) bool
	matches       func(id, aclExpr string) bool
	// anyID, if set, is an ACL id every id of the scheme matches (the sasl scheme's
	// zookeeper.letAnySaslUserDoX).
	anyID string
}

// match is matches with anyID.
func (p provider) match(id, aclExpr string) bool {
	return p.matches(id, aclExpr) || p.anyID != "" && aclExpr == p.anyID
}

// providers are the schemes ZooKeeper 3.8 registers by default (ProviderRegistry):
// ip and digest (unless Options.NoDigest). "world" is not a provider: only world:anyone is accepted, by name.
var providers = map[string]provider{
	"digest": {authenticated: true, valid: digestValid, matches: func(id, e string) bool { return id == e }},
	"ip":     {authenticated: false, valid: ipValid, matches: ipMatches},
}

// saslProvider is ZooKeeper's SASLAuthenticationProvider, registered only by an
// authProvider.N key (Options.SASL): a user named "super" matches every sasl ACL.
var saslProvider = provider{authenticated: true, valid: ValidSASLID,
	matches: func(id, e string) bool { return id == "super" || id == e }}

// provider is the scheme's provider if this tree has it registered.
func (o Options) provider(scheme string) (provider, bool) {
	switch scheme {
	case "x509":
		return x509Provider, o.X509
	case "sasl":
		if o.SASL {
			p := saslProvider
			p.anyID = o.SASLAnyUser
			return p, true
		}
	case "digest":
		if o.NoDigest {
			return provider{}, false
		}
	}
	p, ok := providers[scheme]
	return p, ok
}

// ValidSASLID is ZooKeeper's KerberosName rule, which SASLAuthenticationProvider
// takes for sasl ACL ids and its SASL server for authenticated names: a name with an
// '@' must be primary[/instance]@realm, with no other '/' or '@'.
func ValidSASLID(name string) bool {
	primary, realm, found := strings.Cut(name, "@")
	if !found {
		return true
	}
	return !strings.ContainsAny(realm, "/@") && strings.Count(primary, "/") <= 1
}

// DigestID is DigestAuthenticationProvider.generateDigest: the user part (before the
// first colon) + ":" + base64(sha1(whole "user:password")).
func DigestID(userColonPassword string) string {
	user, _, _ := strings.Cut(userColonPassword, ":")
	sum := sha1.Sum([]byte(userColonPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// javaSplit is String.split(sep) with no limit: trailing empty strings are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// digestValid: id.split(":").length == 2, so "user:" and "a:b:c" are invalid.
func digestValid(id string) bool { return len(javaSplit(id, ":")) == 2 }

// ipv4 parses a dotted quad as IPAuthenticationProvider.v4addr2Bytes does. ZooKeeper
// 3.8 has no IPv6 support here ("TODO Write the v6addr2Bytes"): an IPv6 ACL is invalid
// and an IPv6 client never matches.
func ipv4(s string) ([]byte, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil, false
	}
	b := make([]byte, 4)
	for i, p := range parts {
		v, ok := javaParseInt(p)
		if !ok || v < 0 || v > 255 {
			return nil, false
		}
		b[i] = byte(v)
	}
	return b, true
}

// javaParseInt is Integer.parseInt for ASCII input: optional sign, then decimal digits.
func javaParseInt(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	v := int64(0)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		v = v*10 + int64(s[i]-'0')
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	if v > 1<<31-1 || v < -1<<31 {
		return 0, false
	}
	return v, true
}

// ipExpr splits "addr[/bits]" and checks the mask length.
func ipExpr(expr string) ([]byte, int, bool) {
	addr, bitsStr, hasBits := strings.Cut(expr, "/")
	a, ok := ipv4(addr)
	if !ok {
		return nil, 0, false
	}
	bits := len(a) * 8
	if hasBits {
		v, ok := javaParseInt(bitsStr)
		if !ok || v < 0 || v > int64(len(a)*8) {
			return nil, 0, false
		}
		bits = int(v)
	}
	return a, bits, true
}

func ipValid(id string) bool {
	_, _, ok := ipExpr(id)
	return ok
}

func maskBits(b []byte, bits int) {
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits > 0:
			b[i] &= ^byte(0xff >> bits)
			bits = 0
		default:
			b[i] = 0
		}
	}
}

func ipMatches(id, expr string) bool {
	a, bits, ok := ipExpr(expr)
	if !ok {
		return false
	}
	r, ok := ipv4(id)
	if !ok {
		return false
	}
	maskBits(a, bits)
	maskBits(r, bits)
	return string(a) == string(r)
}

func isWorldAnyone(id jute.Id) bool { return id.Scheme == "world" && id.Id == "anyone" }

// fixupACL is PrepRequestProcessor.fixupACL: drop duplicates, refuse an empty list,
// expand "auth" into every authenticated id of the caller (digest, not ip), and refuse
// an id a provider does not know or accept.
func (o Options) fixupACL(acls []jute.ACL, c Caller) ([]jute.ACL, jute.Code) {
	uniq := make([]jute.ACL, 0, len(acls))
	for _, a := range acls {
		dup := false
		for _, u := range uniq {
			if u == a {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, jute.ErrInvalidACL
	}
	out := make([]jute.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch {
		case isWorldAnyone(a.Id):
			out = append(out, a)
		case a.Id.Scheme == "auth":
			found := false
			for _, cid := range c.Ids {
				if p, ok := o.provider(cid.Scheme); ok && p.authenticated {
					found = true
					out = append(out, jute.ACL{Perms: a.Perms, Id: cid})
				}
			}
			if !found {
				return nil, jute.ErrInvalidACL
			}
		default:
			p, ok := o.provider(a.Id.Scheme)
			if !ok || !p.valid(a.Id.Id) {
				return nil, jute.ErrInvalidACL
			}
			out = append(out, a)
		}
	}
	return out, jute.OK
}

// checkACL is ZooKeeperServer.checkACL: an empty list allows all, a super caller (or
// one holding a "super" id, as the digest provider adds for the super digest) passes,
// otherwise some entry that has any bit of perm must match one of the caller's ids.
func (o Options) checkACL(acl []jute.ACL, perm int32, c Caller) jute.Code {
	if len(acl) == 0 || c.Super {
		return jute.OK
	}
	for _, id := range c.Ids {
		if id.Scheme == "super" {
			return jute.OK
		}
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if isWorldAnyone(a.Id) {
			return jute.OK
		}
		p, ok := o.provider(a.Id.Scheme)
		if !ok {
			continue
		}
		for _, id := range c.Ids {
			if id.Scheme == a.Id.Scheme && p.match(id.Id, a.Id.Id) {
				return jute.OK
			}
		}
	}
	return jute.ErrNoAuth
}

// Permitted reports whether c holds perm in acl by checkACL's rules; the watch layer
// asks it of an event's ACL (Event.ACL) before delivering the event.
func (o Options) Permitted(acl []jute.ACL, perm int32, c Caller) bool {
	return o.checkACL(acl, perm, c) == jute.OK
}

// RedactACL is what getACL returns to a caller without ADMIN on the node (3.8,
// FinalRequestProcessor): digest ids keep the user and lose the hash ("user:x").
func RedactACL(acl []jute.ACL) []jute.ACL {
	out := make([]jute.ACL, len(acl))
	for i, a := range acl {
		if a.Id.Scheme == "digest" {
			user, _, _ := strings.Cut(a.Id.Id, ":")
			if strings.Contains(a.Id.Id, ":") {
				a.Id.Id = user + ":x"
			}
		}
		out[i] = a
	}
	return out
}
