package sasl

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// TestRFC2831Example checks the response value and rspauth against the worked example
// of RFC 2831 section 4 (user chris, password secret, realm elwood.innosoft.com).
func TestRFC2831Example(t *testing.T) {
	k := keys{user: "chris", realm: "elwood.innosoft.com", password: "secret",
		nonce: []byte("OA6MG9tEQGm2hh"), cnonce: []byte("OA6MHXh6VqTrRk"), qop: "auth",
		uri: []byte("imap/elwood.innosoft.com")}
	if got := string(k.value("AUTHENTICATE")); got != "d388dad90d4bbd760a152321f2143af7" {
		t.Errorf("response = %s, want RFC 2831's d388dad90d4bbd760a152321f2143af7", got)
	}
	if got := string(k.value("")); got != "ea40f60335c427b5527b84dbabcdfffd" {
		t.Errorf("rspauth = %s, want RFC 2831's ea40f60335c427b5527b84dbabcdfffd", got)
	}
}

// vectors are real exchanges: the nonce a server offered, the client's response and
// the rspauth Java's DigestMD5Server answered (JDK 17, created as ZooKeeper creates it),
// or for puresasl (kazoo's SASL library) the rspauth puresasl itself expects.
var vectors = []struct {
	client, user, password, nonce, response, rspauth, authz string
}{
	{"java", "bob", "secret", "+SPi+W2//rM/DLWbDgcux3R6XZv+5qu1vkBro+C4",
		"Y2hhcnNldD11dGYtOCx1c2VybmFtZT0iYm9iIixyZWFsbT0iemstc2FzbC1tZDUiLG5vbmNlPSIrU1BpK1cyLy9yTS9ETFdiRGdjdXgzUjZYWnYrNXF1MXZrQnJvK0M0IixuYz0wMDAwMDAwMSxjbm9uY2U9Imk0V2xxcW5sQjVqODcrWjBrdWRhb2lSWWpxUmV6d28zS2xDQVd4RjEiLGRpZ2VzdC11cmk9Inpvb2tlZXBlci96ay1zYXNsLW1kNSIsbWF4YnVmPTY1NTM2LHJlc3BvbnNlPTMyZThiNzYwNTFiYWFiZWMwZDk3NTEyYTU3ZTRiYzE1LHFvcD1hdXRo",
		"rspauth=c10419b7dc3d27cb8006d065ec87afc2", "bob"},
	// Latin-1 user name (hashed in ISO 8859-1), a password with a character beyond
	// Latin-1 (hashed in UTF-8).
	{"java", "jörg", "pässwörd€", "NgMokYGYaxB42Fu4AORqMFmX96g7bazq3Xw2bexe",
		"Y2hhcnNldD11dGYtOCx1c2VybmFtZT0iasO2cmciLHJlYWxtPSJ6ay1zYXNsLW1kNSIsbm9uY2U9Ik5nTW9rWUdZYXhCNDJGdTRBT1JxTUZtWDk2ZzdiYXpxM1h3MmJleGUiLG5jPTAwMDAwMDAxLGNub25jZT0iMlEza1JXS0tab0Y5eFBHQ2NzTzB1RWl4T3lFV0M1ZkoxSU9NVmw2bSIsZGlnZXN0LXVyaT0iem9va2VlcGVyL3prLXNhc2wtbWQ1IixtYXhidWY9NjU1MzYscmVzcG9uc2U9MGYwYjZkMDVkMmU4YTU4MmMyYmI3OGU3YWQ2MjRlYjUscW9wPWF1dGg=",
		"rspauth=3bf24e9da7db78ede7ebe00979fe659e", "jörg"},
	// An authzid ("bob") enters A1; ZooKeeper's callback handler still authorizes the
	// authenticated user name.
	{"java", "alice", `p"w\x`, "RxA7J4y5kSiEk3cPNz5PHvq+PPBUfdZZNIHuouFD",
		"Y2hhcnNldD11dGYtOCx1c2VybmFtZT0iYWxpY2UiLHJlYWxtPSJ6ay1zYXNsLW1kNSIsbm9uY2U9IlJ4QTdKNHk1a1NpRWszY1BOejVQSHZxK1BQQlVmZFpaTklIdW91RkQiLG5jPTAwMDAwMDAxLGNub25jZT0iOXMxMjdkYytrVnlwalgzdXFldXM2bGFCaUJkcGRTUUd1bWM2RTluVyIsZGlnZXN0LXVyaT0iem9va2VlcGVyL3prLXNhc2wtbWQ1IixtYXhidWY9NjU1MzYscmVzcG9uc2U9MDc3ZDc1NjZjNWE5NDQ2YTkxZDlmYjA1MTFhMWViNTgscW9wPWF1dGgsYXV0aHppZD0iYm9iIg==",
		"rspauth=2311edab42e4363ff2eadb6d6d37810c", "alice"},
	{"puresasl", "bob", "secret", "6mGv9K8Yt2lQb0ZcR1xNw3dE5fA7hJ9kL2mP4qS6",
		base64.StdEncoding.EncodeToString([]byte(`qop=auth,realm="zk-sasl-md5",username="bob",nonce="6mGv9K8Yt2lQb0ZcR1xNw3dE5fA7hJ9kL2mP4qS6",cnonce="13436424411240122",nc=00000001,digest-uri="zookeeper/zk-sasl-md5",response=9091bb9daf12eaeacab07c7d64f885d8`)),
		"rspauth=a94e101475a879f5030030896c04ad89", "bob"},
}

func TestDigestVectors(t *testing.T) {
	for _, v := range vectors {
		d := newDigest(Users{v.user: v.password, "other": "x"}, v.nonce)
		ch, err := d.Next(nil)
		if err != nil {
			t.Fatal(err)
		}
		want := `realm="zk-sasl-md5",nonce="` + v.nonce + `",charset=utf-8,algorithm=md5-sess`
		if string(ch) != want {
			t.Fatalf("challenge %s, want %s", ch, want)
		}
		resp, _ := base64.StdEncoding.DecodeString(v.response)
		got, err := d.Next(resp)
		if err != nil || string(got) != v.rspauth || !d.Complete() || d.AuthorizationID() != v.authz {
			t.Errorf("%s %s: %q %v complete=%v authz=%q, want %s as %s", v.client, v.user, got, err, d.Complete(), d.AuthorizationID(), v.rspauth, v.authz)
		}
		if _, err := d.Next(nil); !errors.Is(err, ErrFailed) {
			t.Errorf("%s %s: a token after completion: %v, want ErrFailed (server at illegal state)", v.client, v.user, err)
		}
		bad := newDigest(Users{v.user: v.password + "!"}, v.nonce)
		bad.Next(nil)
		if _, err := bad.Next(resp); !errors.Is(err, ErrFailed) || bad.Complete() {
			t.Errorf("%s %s, wrong password: %v complete=%v, want ErrFailed", v.client, v.user, err, bad.Complete())
		}
	}
}

// TestDigestRefusals edits the Java client's valid response one directive at a time.
func TestDigestRefusals(t *testing.T) {
	v := vectors[0]
	raw, _ := base64.StdEncoding.DecodeString(v.response)
	valid := string(raw)
	cases := []struct {
		name, from, to string
		want           error
	}{
		{"unknown user", `username="bob"`, `username="eve"`, ErrFailed},
		{"no realm", `realm="zk-sasl-md5",`, ``, ErrFailed},
		{"other realm", `realm="zk-sasl-md5"`, `realm="x"`, ErrFailed},
		{"other nonce", `nonce="+SPi`, `nonce="-SPi`, ErrFailed},
		{"no cnonce", `cnonce=`, `xcnonce=`, ErrFailed},
		{"nc 2", `nc=00000001`, `nc=00000002`, ErrFailed},
		{"nc not hex", `nc=00000001`, `nc=0000000g`, ErrAbort},
		{"maxbuf not a number", `maxbuf=65536`, `maxbuf=lots`, ErrAbort},
		{"qop auth-int", `qop=auth`, `qop=auth-int`, ErrFailed},
		{"qop auth-conf", `qop=auth`, `qop=auth-conf`, ErrFailed},
		{"charset latin1", `charset=utf-8`, `charset=iso-8859-1`, ErrFailed},
		{"other digest-uri", `digest-uri="zookeeper/zk-sasl-md5"`, `digest-uri="zookeeper/127.0.0.1"`, ErrFailed},
		{"no response", `response=`, `xresponse=`, ErrFailed},
		{"upper-case response", `response=32e8b76051baabec0d97512a57e4bc15`, `response=32E8B76051BAABEC0D97512A57E4BC15`, ErrFailed},
		{"two usernames", `username="bob"`, `username="bob",username="bob"`, ErrFailed},
		{"unclosed quote", `username="bob"`, `username="bob`, ErrFailed},
		{"valueless", `qop=auth`, `qop=`, ErrFailed},
	}
	for _, c := range cases {
		if !strings.Contains(valid, c.from) {
			t.Fatalf("%s: %q not in the response", c.name, c.from)
		}
		d := newDigest(Users{"bob": "secret"}, v.nonce)
		d.Next(nil)
		_, err := d.Next([]byte(strings.Replace(valid, c.from, c.to, 1)))
		if !errors.Is(err, c.want) || d.Complete() {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// Case differences in the digest-uri and extra white space are accepted, as Java does.
	d := newDigest(Users{"bob": "secret"}, v.nonce)
	d.Next(nil)
	loose := strings.Replace(strings.ReplaceAll(valid, ",", " ,\t"), `zookeeper/zk-sasl-md5`, `ZooKeeper/ZK-SASL-MD5`, 1)
	if _, err := d.Next([]byte(loose)); !errors.Is(err, ErrFailed) {
		// The digest-uri is hashed as sent, so a different case changes A2: the client's
		// response no longer matches. Only the white space alone must pass.
		t.Errorf("case-changed digest-uri: %v, want a mismatched response", err)
	}
	d = newDigest(Users{"bob": "secret"}, v.nonce)
	d.Next(nil)
	if _, err := d.Next([]byte(strings.ReplaceAll(valid, ",", " ,\t"))); err != nil {
		t.Errorf("white space around commas: %v", err)
	}
}

func TestDigestSequence(t *testing.T) {
	d := NewDigest(Users{"bob": "secret"})
	if ch, err := d.Next([]byte("x")); err != nil || !strings.HasPrefix(string(ch), `realm="zk-sasl-md5",nonce="`) {
		t.Errorf("an initial response: %q %v, want it ignored and a challenge", ch, err)
	}
	d = NewDigest(Users{"bob": "secret"})
	if _, err := d.Next(make([]byte, 4097)); !errors.Is(err, ErrFailed) {
		t.Errorf("a 4097-byte token: %v, want ErrFailed", err)
	}
	a, b := NewDigest(nil), NewDigest(nil)
	ca, _ := a.Next(nil)
	cb, _ := b.Next(nil)
	if string(ca) == string(cb) || len(a.nonce) != 40 {
		t.Errorf("nonces %q and %q: want fresh 40-character nonces", a.nonce, b.nonce)
	}
}
