package sasl

import (
	"bytes"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/zkraft/zkraft/datatree"
)

const (
	// Realm is the realm ZooKeeper's server offers and its clients answer with (its
	// SaslServer is created with this server name, which Java also takes as the realm).
	Realm = "zk-sasl-md5"
	// DigestURI is the digest-uri a response must name: service "/" server name.
	DigestURI = "zookeeper/" + Realm
	// maxResponse is Java's limit on a client's token.
	maxResponse = 4096
)

var (
	// ErrFailed is a failed exchange (wrong password, unknown user, a malformed or
	// unexpected token): ZooKeeper answers AuthFailed and closes the connection.
	ErrFailed = errors.New("SASL authentication failed")
	// ErrAbort is a response on which ZooKeeper's server throws outside SASL's own
	// checks (a maxbuf or nonce count that is not a number, a user name its Kerberos
	// name rules reject): it closes the connection without a reply.
	ErrAbort = errors.New("SASL exchange aborted")
)

func failed(format string, args ...any) error {
	return fmt.Errorf("%w: DIGEST-MD5: %s", ErrFailed, fmt.Sprintf(format, args...))
}

// Digest is the server side of one DIGEST-MD5 exchange (RFC 2831), as Java's
// DigestMD5Server runs it for ZooKeeper: the client's first token (empty, or an initial
// response Java ignores) is answered with a challenge, its second token is the digest
// response, which the server checks and answers with rspauth; any token after that, or
// after a failure, fails.
type Digest struct {
	users Users
	nonce string
	step  int // 0: expects the first token; 1: expects the response; 2: done or failed
	done  bool
	authz string
}

// NewDigest starts an exchange for users with a fresh nonce.
func NewDigest(users Users) *Digest { return newDigest(users, newNonce()) }

func newDigest(users Users, nonce string) *Digest { return &Digest{users: users, nonce: nonce} }

// newNonce is 30 random bytes in base64, as Java's.
func newNonce() string {
	b := make([]byte, 30)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// Complete reports whether the client has authenticated.
func (d *Digest) Complete() bool { return d.done }

// AuthorizationID is the identity the client authenticated as (its user name), once
// Complete.
func (d *Digest) AuthorizationID() string { return d.authz }

// Next takes the client's token and returns the server's; an error wraps ErrFailed or
// ErrAbort, and the exchange is over.
func (d *Digest) Next(token []byte) ([]byte, error) {
	if len(token) > maxResponse {
		d.step = 2
		return nil, failed("invalid digest response length %d, expected < %d", len(token), maxResponse)
	}
	switch d.step {
	case 0:
		// A client's initial response is ignored: RFC 2831 2.2 lets a server that does
		// not take subsequent authentication answer with a fresh challenge, as Java does.
		d.step = 1
		return []byte(`realm="` + Realm + `",nonce="` + d.nonce + `",charset=utf-8,algorithm=md5-sess`), nil
	case 1:
		d.step = 2
		dir, err := parseDirectives(token)
		if err != nil {
			return nil, err
		}
		return d.verify(dir)
	}
	return nil, failed("server at illegal state")
}

// verify checks a digest response in the order Java does and returns rspauth.
func (d *Digest) verify(dir directives) ([]byte, error) {
	k, got, err := d.readResponse(dir)
	if err != nil {
		return nil, err
	}
	password, ok := d.users[k.user]
	if !ok {
		return nil, failed("cannot acquire password for %s in realm %s", k.user, k.realm)
	}
	k.password = password
	if !bytes.Equal(got, k.value("AUTHENTICATE")) {
		return nil, failed("mismatched response for %s", k.user)
	}
	if !datatree.ValidSASLID(k.user) {
		return nil, fmt.Errorf("%w: %q is not a valid Kerberos name", ErrAbort, k.user)
	}
	d.done, d.authz = true, k.user
	return append([]byte("rspauth="), k.value("")...), nil
}

// readResponse checks the directives of a digest response (all but the password) and
// returns the hash inputs they give and the client's response value.
func (d *Digest) readResponse(dir directives) (k keys, response []byte, err error) {
	if cs, ok := dir["charset"]; ok && string(cs) != "utf-8" {
		return k, nil, failed("incompatible charset value %q", cs)
	}
	if mb, ok := dir["maxbuf"]; ok {
		if _, ok := javaInt(string(mb), 10); !ok {
			return k, nil, fmt.Errorf("%w: maxbuf %q is not a number", ErrAbort, mb)
		}
	}
	user, ok := dir["username"]
	if !ok {
		return k, nil, failed("missing username")
	}
	username := javaString(user)
	realm := javaString(dir["realm"])
	if realm != Realm {
		return k, nil, failed("nonexistent realm %q", realm)
	}
	nonce, ok := dir["nonce"]
	if !ok {
		return k, nil, failed("missing nonce")
	}
	if string(nonce) != d.nonce {
		return k, nil, failed("mismatched nonce")
	}
	cnonce, ok := dir["cnonce"]
	if !ok {
		return k, nil, failed("missing cnonce")
	}
	if nc, ok := dir["nc"]; ok {
		n, ok := javaInt(string(nc), 16)
		if !ok {
			return k, nil, fmt.Errorf("%w: nonce count %q is not a number", ErrAbort, nc)
		}
		if n != 1 {
			return k, nil, failed("nonce count does not match: %q", nc)
		}
	}
	qop := "auth"
	if q, ok := dir["qop"]; ok {
		qop = string(q)
	}
	switch qop {
	case "auth":
	case "auth-int", "auth-conf":
		return k, nil, failed("server does not support qop %s", qop)
	default:
		return k, nil, failed("invalid qop %q", qop)
	}
	uri, ok := dir["digest-uri"]
	if !ok || !strings.EqualFold(javaString(uri), DigestURI) {
		return k, nil, failed("mismatched URI %q, expecting %s", uri, DigestURI)
	}
	response, ok = dir["response"]
	if !ok {
		return k, nil, failed("missing response")
	}
	// An authzid (absent: nil) only enters A1: ZooKeeper authorizes the user name.
	k = keys{user: username, realm: realm, nonce: nonce, cnonce: cnonce, authzid: dir["authzid"], qop: qop, uri: uri}
	return k, response, nil
}

// keys are the inputs of a response value (RFC 2831 2.1.2.1).
type keys struct {
	user, realm, password string
	nonce, cnonce         []byte
	authzid               []byte // nil: none
	qop                   string
	uri                   []byte
}

// value is the response value for method ("AUTHENTICATE" for the client's response,
// "" for the server's rspauth), with algorithm md5-sess and nonce count 1:
//
//	HEX(KD(HEX(H(A1)), nonce ":" nc ":" cnonce ":" qop ":" HEX(H(A2))))
//	A1 = H(user ":" realm ":" password) ":" nonce ":" cnonce [":" authzid]
//	A2 = method ":" digest-uri
func (k *keys) value(method string) []byte {
	secret := md5.Sum(bytes.Join([][]byte{latin1OrUTF8(k.user), latin1OrUTF8(k.realm), latin1OrUTF8(k.password)}, []byte(":")))
	a1 := append(secret[:], ':')
	a1 = append(append(append(a1, k.nonce...), ':'), k.cnonce...)
	if k.authzid != nil {
		a1 = append(append(a1, ':'), k.authzid...)
	}
	ha1 := md5.Sum(a1)
	ha2 := md5.Sum([]byte(method + ":" + string(k.uri)))
	kd := bytes.Join([][]byte{hexOf(ha1[:]), k.nonce, []byte("00000001"), k.cnonce, []byte(k.qop), hexOf(ha2[:])}, []byte(":"))
	sum := md5.Sum(kd)
	return hexOf(sum[:])
}

func hexOf(b []byte) []byte { return []byte(hex.EncodeToString(b)) }

// javaString is how Java reads a directive's bytes: UTF-8, a malformed sequence
// becoming U+FFFD.
func javaString(b []byte) string { return strings.ToValidUTF8(string(b), "\uFFFD") }

// latin1OrUTF8 encodes s for A1 as Java does (RFC 2831's rule for charset=utf-8): in
// ISO 8859-1 when every character fits, in UTF-8 otherwise.
func latin1OrUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return []byte(s)
		}
		out = append(out, byte(r))
	}
	return out
}

// javaInt is Integer.parseInt(s, radix) for ASCII: an optional sign, then digits, in range.
func javaInt(s string, radix int) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if s == "" {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var dgt int64
		switch {
		case c >= '0' && c <= '9':
			dgt = int64(c - '0')
		case c >= 'a' && c <= 'z':
			dgt = int64(c-'a') + 10
		case c >= 'A' && c <= 'Z':
			dgt = int64(c-'A') + 10
		default:
			return 0, false
		}
		if dgt >= int64(radix) {
			return 0, false
		}
		v = v*int64(radix) + dgt
		if v > 1<<31 {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, v >= -1<<31 && v <= 1<<31-1
}
