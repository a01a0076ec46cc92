package datatree

import (
	"testing"

	"github.com/zkraft/zkraft/jute"
)

// Values printed by the real org.apache.zookeeper.server.auth.DigestAuthenticationProvider 3.8.0.
func TestDigestIDMatchesZooKeeper(t *testing.T) {
	cases := map[string]string{
		"super:test": "super:D/InIHSb7yEEbrWz8b9l71RjZJU=",
		"user:pass":  "user:smGaoVKd/cQkjm7b88GyorAUz20=",
		"a:b:c":      "a:cLzgnoJ6mP5qz3w+mwvPE2vDgu0=",
		"nocolon":    "nocolon:Ra+cHr2ZoHvBjtNArFGNGlVie4g=",
		"ü:pä":       "ü:YaU0sS5YxKHLhFsvFFTao+h/xQ8=",
	}
	for in, want := range cases {
		if got := DigestID(in); got != want {
			t.Errorf("DigestID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFixupACL(t *testing.T) {
	dig := jute.Id{Scheme: "digest", Id: DigestID("u:p")}
	ip := jute.Id{Scheme: "ip", Id: "127.0.0.1"}
	cases := []struct {
		name   string
		acl    []jute.ACL
		caller Caller
		want   []jute.ACL
		code   jute.Code
	}{
		{"nil", nil, anyone, nil, jute.ErrInvalidACL},
		{"empty", []jute.ACL{}, anyone, nil, jute.ErrInvalidACL},
		{"duplicates dropped", append(world, world...), anyone, world, jute.OK},
		{"world:foo", aclOf(31, "world", "foo"), anyone, nil, jute.ErrInvalidACL},
		{"unknown scheme", aclOf(31, "sasl", "bob"), anyone, nil, jute.ErrInvalidACL},
		{"auth, only ip", aclOf(31, "auth", ""), Caller{Ids: []jute.Id{ip}}, nil, jute.ErrInvalidACL},
		{"auth expands digests, not ip or super", aclOf(5, "auth", "ignored"), Caller{Ids: []jute.Id{ip, dig, {Scheme: "super"}}},
			[]jute.ACL{{Perms: 5, Id: dig}}, jute.OK},
		{"digest user:", aclOf(31, "digest", "user:"), anyone, nil, jute.ErrInvalidACL},
		{"digest a:b:c", aclOf(31, "digest", "a:b:c"), anyone, nil, jute.ErrInvalidACL},
		{"digest :x (checked on 3.8.0)", aclOf(31, "digest", ":x"), anyone, aclOf(31, "digest", ":x"), jute.OK},
		{"ip cidr", aclOf(31, "ip", "10.0.0.0/8"), anyone, aclOf(31, "ip", "10.0.0.0/8"), jute.OK},
		{"ip +sign (Integer.parseInt)", aclOf(31, "ip", "+127.0.0.1"), anyone, aclOf(31, "ip", "+127.0.0.1"), jute.OK},
		{"ip bits 33", aclOf(31, "ip", "127.0.0.1/33"), anyone, nil, jute.ErrInvalidACL},
		{"ip bits empty", aclOf(31, "ip", "127.0.0.1/"), anyone, nil, jute.ErrInvalidACL},
		{"ip octet 256", aclOf(31, "ip", "1.2.3.256"), anyone, nil, jute.ErrInvalidACL},
		{"ipv6 (3.8 has no v6 support; checked)", aclOf(31, "ip", "::1"), anyone, nil, jute.ErrInvalidACL},
	}
	for _, c := range cases {
		got, code := Options{}.fixupACL(c.acl, c.caller)
		if code != c.code || len(got) != len(c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, code, c.want, c.code)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestCheckACL(t *testing.T) {
	dig := DigestID("u:p")
	ipc := func(a string) Caller { return Caller{Ids: []jute.Id{{Scheme: "ip", Id: a}}} }
	digc := Caller{Ids: []jute.Id{{Scheme: "ip", Id: "1.1.1.1"}, {Scheme: "digest", Id: dig}}}
	cases := []struct {
		name   string
		acl    []jute.ACL
		perm   int32
		caller Caller
		want   jute.Code
	}{
		{"world", world, jute.PermRead, ipc("1.2.3.4"), jute.OK},
		{"world wrong perm", aclOf(jute.PermRead, "world", "anyone"), jute.PermWrite, ipc("1.2.3.4"), jute.ErrNoAuth},
		{"mask: any bit", aclOf(jute.PermAdmin, "world", "anyone"), jute.PermRead | jute.PermAdmin, ipc("1.2.3.4"), jute.OK},
		{"empty acl allows", []jute.ACL{}, jute.PermAdmin, Caller{}, jute.OK},
		{"super flag", aclOf(0, "world", "anyone"), jute.PermAll, Caller{Super: true}, jute.OK},
		{"super id", aclOf(jute.PermRead, "digest", "x:y"), jute.PermWrite, Caller{Ids: []jute.Id{{Scheme: "super", Id: ""}}}, jute.OK},
		{"ip exact", aclOf(31, "ip", "127.0.0.1"), jute.PermRead, ipc("127.0.0.1"), jute.OK},
		{"ip other", aclOf(31, "ip", "127.0.0.1"), jute.PermRead, ipc("127.0.0.2"), jute.ErrNoAuth},
		{"ip /8", aclOf(31, "ip", "10.9.9.9/8"), jute.PermRead, ipc("10.1.2.3"), jute.OK},
		{"ip /8 miss", aclOf(31, "ip", "10.0.0.0/8"), jute.PermRead, ipc("11.1.2.3"), jute.ErrNoAuth},
		{"ip /20", aclOf(31, "ip", "192.168.16.0/20"), jute.PermRead, ipc("192.168.31.255"), jute.OK},
		{"ip /20 miss", aclOf(31, "ip", "192.168.16.0/20"), jute.PermRead, ipc("192.168.32.0"), jute.ErrNoAuth},
		{"ip /0", aclOf(31, "ip", "0.0.0.0/0"), jute.PermRead, ipc("8.8.8.8"), jute.OK},
		{"ipv6 client never matches", aclOf(31, "ip", "0.0.0.0/0"), jute.PermRead, ipc("::1"), jute.ErrNoAuth},
		{"digest", aclOf(31, "digest", dig), jute.PermRead, digc, jute.OK},
		{"digest other", aclOf(31, "digest", DigestID("u:q")), jute.PermRead, digc, jute.ErrNoAuth},
		{"scheme must match", aclOf(31, "digest", "1.1.1.1"), jute.PermRead, digc, jute.ErrNoAuth},
	}
	for _, c := range cases {
		if got := (Options{}).checkACL(c.acl, c.perm, c.caller); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	tr := New(Options{})
	if tr.CheckACL("/nope", jute.PermRead, Caller{Super: true}) != jute.ErrNoNode {
		t.Error("CheckACL on a missing node")
	}
	if tr.CheckACL("/zookeeper/config", jute.PermWrite, ipc("127.0.0.1")) != jute.ErrNoAuth {
		t.Error("/zookeeper/config is read-only")
	}
}

func TestACLCacheShares(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 100; i++ {
		f.mustCreateAs(anyone, "/n", jute.FlagPersistentSequential, aclOf(jute.PermRead, "ip", "10.0.0.0/8"))
	}
	if n := f.tree.acls.size(); n != 3 { // open, read-only, and the shared one
		t.Fatalf("acl cache holds %d lists", n)
	}
	for _, name := range mustChildren(t, f.tree, "/") {
		if name != "zookeeper" {
			f.apply(anyone, jute.OpDelete, &jute.DeleteRequest{Path: "/" + name, Version: -1})
		}
	}
	if n := f.tree.acls.size(); n != 2 {
		t.Fatalf("after deletes the cache holds %d lists", n)
	}
}

func mustChildren(t *testing.T, tr *Tree, path string) []string {
	names, _, code := tr.Children(path)
	if code != jute.OK {
		t.Fatal(code)
	}
	return names
}

func TestRedactACL(t *testing.T) {
	in := []jute.ACL{{Perms: 1, Id: jute.Id{Scheme: "digest", Id: "u:abc"}}, world[0]}
	out := RedactACL(in)
	if out[0].Id.Id != "u:x" || out[1] != world[0] || in[0].Id.Id != "u:abc" {
		t.Fatal(out)
	}
}

// TestSASLProvider checks the sasl scheme with and without ZooKeeper's
// SASLAuthenticationProvider registered (authProvider.N).
func TestSASLProvider(t *testing.T) {
	bob := Caller{Ids: []jute.Id{{Scheme: "ip", Id: "127.0.0.1"}, {Scheme: "sasl", Id: "bob"}}}
	superUser := Caller{Ids: []jute.Id{{Scheme: "sasl", Id: "super"}}}
	on, off := &Options{SASL: true}, &Options{}
	fixups := []struct {
		name string
		opts *Options
		acl  []jute.ACL
		want []jute.ACL
		code jute.Code
	}{
		{"no provider: invalid", off, aclOf(31, "sasl", "bob"), nil, jute.ErrInvalidACL},
		{"provider: valid", on, aclOf(31, "sasl", "bob"), aclOf(31, "sasl", "bob"), jute.OK},
		{"kerberos form", on, aclOf(31, "sasl", "zk/host@EXAMPLE.COM"), aclOf(31, "sasl", "zk/host@EXAMPLE.COM"), jute.OK},
		{"two realms", on, aclOf(31, "sasl", "a@b@c"), nil, jute.ErrInvalidACL},
		{"two instances", on, aclOf(31, "sasl", "a/b/c@R"), nil, jute.ErrInvalidACL},
		{"auth expands sasl", on, aclOf(31, "auth", ""), aclOf(31, "sasl", "bob"), jute.OK},
		{"auth without provider", off, aclOf(31, "auth", ""), nil, jute.ErrInvalidACL},
	}
	for _, c := range fixups {
		got, code := c.opts.fixupACL(c.acl, bob)
		if code != c.code || len(got) != len(c.want) || (len(got) > 0 && got[0] != c.want[0]) {
			t.Errorf("fixup %s: %v %v, want %v %v", c.name, got, code, c.want, c.code)
		}
	}
	checks := []struct {
		name   string
		opts   *Options
		acl    []jute.ACL
		caller Caller
		want   jute.Code
	}{
		{"match", on, aclOf(jute.PermRead, "sasl", "bob"), bob, jute.OK},
		{"other user", on, aclOf(jute.PermRead, "sasl", "alice"), bob, jute.ErrNoAuth},
		{"no provider matches nobody", off, aclOf(jute.PermRead, "sasl", "bob"), bob, jute.ErrNoAuth},
		{"a user named super matches any", on, aclOf(jute.PermRead, "sasl", "alice"), superUser, jute.OK},
	}
	for _, c := range checks {
		if got := c.opts.checkACL(c.acl, jute.PermRead, c.caller); got != c.want {
			t.Errorf("check %s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestDigestProviderDisabled: with Options.NoDigest, as with ZooKeeper's
// DigestAuthenticationProvider.enabled=false, a digest ACL is invalid, "auth" does not
// expand to a digest id, and a digest entry of an existing ACL matches nobody.
func TestDigestProviderDisabled(t *testing.T) {
	u := Caller{Ids: []jute.Id{{Scheme: "ip", Id: "127.0.0.1"}, {Scheme: "digest", Id: DigestID("u:p")}}}
	off := &Options{NoDigest: true}
	if _, code := off.fixupACL(aclOf(31, "digest", DigestID("u:p")), u); code != jute.ErrInvalidACL {
		t.Errorf("digest ACL: %v, want InvalidACL", code)
	}
	if _, code := off.fixupACL(aclOf(31, "auth", ""), u); code != jute.ErrInvalidACL {
		t.Errorf("auth ACL: %v, want InvalidACL", code)
	}
	if code := off.checkACL(aclOf(jute.PermRead, "digest", DigestID("u:p")), jute.PermRead, u); code != jute.ErrNoAuth {
		t.Errorf("digest entry: %v, want NoAuth", code)
	}
	on := &Options{}
	if code := on.checkACL(aclOf(jute.PermRead, "digest", DigestID("u:p")), jute.PermRead, u); code != jute.OK {
		t.Errorf("digest entry with the provider: %v, want OK", code)
	}
}
