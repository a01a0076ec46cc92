// Package e2e owns the end-to-end scenarios: real programs, unchanged, run against real
// zkraft processes and real Apache ZooKeeper 3.8 processes (server/ztest starts both),
// with what the program reports compared between the two or checked by the program's own
// rules. Each scenario is one test file named for the program it drives; harness.go
// holds the little they share (finding a program, running it with a deadline, talking to
// an interactive one line by line, starting servers that are stopped at the test's end).
//
// Every scenario has a full form, with longer runs and clusters, when ZKRAFT_E2E=full
// (`make test` and `make e2e` set it; ZKRAFT_REQUIRE_CLIENTS=1 turns a missing program
// into a failure), and a quick form otherwise, for a plain `go test ./...`. Each logs one line "e2e <scenario>: ..." with its
// figures. Traffic goes to loopback only; every process started is stopped.
//
// harness.go is the package's only non-test file, and only its tests use it: nothing
// imports the package (.ci/verify-layers keeps it at the top).
package e2e
