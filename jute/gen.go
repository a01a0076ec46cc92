package jute

//go:generate go run ./internal/gen -in zookeeper.jute -out records_gen.go
