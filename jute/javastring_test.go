package jute

import (
	"encoding/hex"
	"testing"
)

// Bytes that are not UTF-8 decode as Java's new String(b, UTF_8) decodes them: each
// malformed sequence one U+FFFD, cut where Java cuts it. The expected values are Java
// 17's (and were checked against it for every one- and two-byte input and 385,000
// others).
func TestJavaString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"2f61", "2f61"},                         // valid: unchanged
		{"c3a9", "c3a9"},                         // é
		{"f09f9880", "f09f9880"},                 // an emoji
		{"ff", "efbfbd"},                         // never in UTF-8
		{"fffe", "efbfbdefbfbd"},                 // one each
		{"61ff3a62", "61efbfbd3a62"},             // inside a digest user:password
		{"e282", "efbfbd"},                       // cut short at the end: one
		{"e28241", "efbfbd41"},                   // cut short before an ASCII byte
		{"eda080", "efbfbd"},                     // an encoded surrogate: one
		{"c0af", "efbfbdefbfbd"},                 // overlong: two
		{"e080", "efbfbdefbfbd"},                 // overlong: two
		{"f4908080", "efbfbdefbfbdefbfbdefbfbd"}, // past U+10FFFF: four
		{"f09f98", "efbfbd"},                     // four bytes cut short: one
		{"f09f9841", "efbfbd41"},                 // cut short before an ASCII byte
	} {
		in, _ := hex.DecodeString(c.in)
		if got := hex.EncodeToString([]byte(JavaString(in))); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
	// A client's request is read so (AsJava, kept across Reset); zkraft's own records
	// are read as written.
	frame := append(be32(3), '/', 'a', 0xff)
	d := &Decoder{AsJava: true}
	d.Reset(frame)
	var r SyncRequest
	if r.Decode(d); d.Err != nil || r.Path != "/a\uFFFD" {
		t.Fatalf("decoded %q, %v", r.Path, d.Err)
	}
	if err := Unmarshal(frame, &r); err != nil || r.Path != "/a\xff" {
		t.Fatalf("decoded %q, %v without AsJava", r.Path, err)
	}
}
