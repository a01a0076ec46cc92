package sasl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseJAAS: the accepted and refused inputs are the ones Java 17's JAAS reader
// was run on (javax.security.auth.login.Configuration), with its results.
func TestParseJAAS(t *testing.T) {
	good := `/* a comment */ Server { // to the end of the line
 org.apache.zookeeper.server.auth.DigestLoginModule required
 user_bob="sec ret"
 user_esc="a\"b\\c\tx\101"
 user_word=y.z-$w*
 user_empty=""
 debug=true;
 org.apache.zookeeper.server.auth.DigestLoginModule SUFFICIENT user_bob="later" user_z="1";
};
Client{a.B optional username="bob" password="p";};
Empty { };
`
	j, err := ParseJAAS(good)
	if err != nil {
		t.Fatal(err)
	}
	srv := j["Server"]
	if len(srv) != 2 || srv[0].Flag != "required" || srv[1].Flag != "sufficient" || j["Client"][0].Options["username"] != "bob" {
		t.Fatalf("parsed %+v", j)
	}
	want := map[string]string{"user_bob": "sec ret", "user_esc": "a\"b\\c\txA", "user_word": "y.z-$w*", "user_empty": "", "debug": "true"}
	for k, v := range want {
		if srv[0].Options[k] != v {
			t.Errorf("option %s = %q, want %q", k, srv[0].Options[k], v)
		}
	}
	if _, ok := j["Empty"]; ok {
		t.Errorf("an empty section is found; Java finds no entry for it")
	}
	users, found, err := j.ServerUsers("Server")
	if err != nil || !found || len(users) != 5 || users["bob"] != "later" || users["empty"] != "" {
		t.Errorf("users %v %v %v", users, found, err)
	}
	if _, found, err := j.ServerUsers("server"); found || err != nil {
		t.Errorf("section names are case-sensitive: found=%v %v", found, err)
	}
	if _, _, err := j.ServerUsers("Client"); err == nil || !strings.Contains(err.Error(), "a.B") {
		t.Errorf("a section with another login module: %v, want an error naming it", err)
	}

	bad := map[string]string{
		"hash comment":      "# comment\nServer { a.B required user_x=\"y\"; };",
		"number value":      `Server { a.B required user_x=123; };`,
		"no module ;":       `Server { a.B required user_x="y" };`,
		"no section ;":      `Server { a.B required user_x="y"; }`,
		"twice":             `Server { a.B required; }; Server { c.D required; };`,
		"bad flag":          `Server { a.B bogus user_x="y"; };`,
		"single quotes":     `Server { a.B required user_x='y'; };`,
		"key starts digit":  `Server { a.B required 9user="x"; };`,
		"string over lines": "Server { a.B required user_x=\"multi\nline\"; };",
		"no brace":          `Server a.B required;`,
		"open comment":      `Server { /* a.B required; };`,
		"no value":          `Server { a.B required user_x=; };`,
	}
	for name, text := range bad {
		if _, err := ParseJAAS(text); err == nil {
			t.Errorf("%s: accepted %q", name, text)
		}
	}
}

func TestLoadJAAS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jaas.conf")
	os.WriteFile(path, []byte("Server {\n a.B required\n user_x=\"y\"\n oops;\n};\n"), 0o600)
	if _, err := LoadJAAS(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("error %v: want the file and line 4", err)
	}
	if _, err := LoadJAAS(path + ".missing"); err == nil {
		t.Errorf("a missing file is accepted")
	}
}
