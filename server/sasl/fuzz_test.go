package sasl

import (
	"encoding/base64"
	"errors"
	"testing"
)

// FuzzDigestResponse feeds arbitrary second tokens to the mechanism, seeded with the
// real clients' responses and partial ones: it must never panic, and anything but the
// exact valid response must fail without completing.
func FuzzDigestResponse(f *testing.F) {
	for _, v := range vectors {
		resp, _ := base64.StdEncoding.DecodeString(v.response)
		f.Add(v.nonce, resp)
		f.Add(v.nonce, resp[:len(resp)/2])
	}
	f.Add("n", []byte(`username="\`))
	f.Fuzz(func(t *testing.T, nonce string, token []byte) {
		d := newDigest(Users{"bob": "secret"}, nonce)
		d.Next(nil)
		out, err := d.Next(token)
		switch {
		case err == nil && (!d.Complete() || len(out) == 0):
			t.Fatalf("no error and no completion: %q", out)
		case err != nil && (d.Complete() || !(errors.Is(err, ErrFailed) || errors.Is(err, ErrAbort))):
			t.Fatalf("error %v, complete=%v", err, d.Complete())
		}
	})
}

// FuzzParseJAAS: the JAAS parser never panics on any file.
func FuzzParseJAAS(f *testing.F) {
	f.Add("Server { a.B required user_x=\"y\\101\" k=v; };\n// c\n/* d */ Client { c.D optional; };")
	f.Add("Server { a.B required user_x=\"y")
	f.Add("S{a required x=\"\\")
	f.Fuzz(func(t *testing.T, text string) {
		j, err := ParseJAAS(text)
		if err == nil {
			for name := range j {
				j.ServerUsers(name)
			}
		}
	})
}
