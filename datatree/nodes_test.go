package datatree

import (
	"errors"
	"testing"
)

// Nodes and FromNodes round-trip a busy tree; a node before its parent is refused.
func TestNodesRoundTrip(t *testing.T) {
	tr := busyTree(t)
	var nodes []StoredNode
	tr.Nodes(func(n StoredNode) { nodes = append(nodes, n) })
	if len(nodes) != tr.NodeCount()-1 {
		t.Fatalf("%d nodes, tree has %d", len(nodes), tr.NodeCount()-1)
	}
	got, err := FromNodes(nodes, Options{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != tr.Digest() || got.ApproximateDataSize() != tr.ApproximateDataSize() {
		t.Fatal("the rebuilt tree differs")
	}
	nodes[1], nodes[len(nodes)-1] = nodes[len(nodes)-1], nodes[1]
	if _, err := FromNodes(nodes, Options{}); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("out of order: %v", err)
	}
	if _, err := FromNodes(nil, Options{}); !errors.Is(err, ErrSnapshotCorrupt) {
		t.Fatalf("no root: %v", err)
	}
}
