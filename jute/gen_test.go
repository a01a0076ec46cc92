package jute

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedIsCurrent regenerates the records from zookeeper.jute and requires the
// result to equal the checked-in records_gen.go byte for byte, as `make verify-jute` does.
func TestGeneratedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go binary")
	}
	out := filepath.Join(t.TempDir(), "records_gen.go")
	cmd := exec.Command(goBin, "run", "./internal/gen", "-in", "zookeeper.jute", "-out", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, b)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("records_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("records_gen.go is stale: run `go generate ./jute`")
	}
}
