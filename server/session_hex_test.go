package server

import (
	"strings"
	"testing"
)

// A session id with its top bit set (that of a member whose id is 128 or more) is printed
// as Java's Long.toHexString prints it, unsigned: in the audit log and in cons.
func TestSessionIDsPrintUnsigned(t *testing.T) {
	const sid = -0x7f00000000000000 // myid 129
	if got := sessionHex(sid); got != "0x8100000000000000" {
		t.Errorf("sessionHex: %s", got)
	}
	if got := sessionHex(0x10000a1b2c30001); got != "0x10000a1b2c30001" {
		t.Errorf("sessionHex: %s", got)
	}
	var b strings.Builder
	connFacts{addr: "127.0.0.1:5000", sid: sid, timeout: 30000}.describe(&b, true)
	if !strings.Contains(b.String(), ",sid=0x8100000000000000,") {
		t.Errorf("cons: %s", b.String())
	}
}
