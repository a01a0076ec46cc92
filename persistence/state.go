package persistence

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/session"
)

// The state machine snapshot (state.bin of a Raft snapshot), version 1. Big-endian.
//
//	magic     4 bytes "ZKRS"
//	version   uint32 (1)
//	zxid      uint64: the last entry the state includes (= the Raft snapshot's index)
//	treeLen   uint64, then the tree in datatree's snapshot format (its own magic
//	          "ZKRDTREE", version and CRC-32C; see datatree/snapshot.go)
//	sessions  the session table in session's snapshot format (its own magic, version
//	          and CRC-32C; see session/table.go)
//
// The whole file is also covered by the CRC-64 in the Raft snapshot's meta.json, which
// Open checks for the newest snapshot before anything starts from it.
const (
	stateMagic   = "ZKRS"
	stateVersion = 1
)

// State is a decoded state machine snapshot.
type State struct {
	Zxid     int64
	Tree     *datatree.Tree
	Sessions *session.Table
}

// EncodeState encodes the state into one buffer (the caller holds whatever lock keeps
// tree and sessions still while it runs).
func EncodeState(zxid int64, tree *datatree.Tree, sessions *session.Table) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(stateMagic)
	var hdr [12]byte
	binary.BigEndian.PutUint32(hdr[:4], stateVersion)
	binary.BigEndian.PutUint64(hdr[4:], uint64(zxid))
	buf.Write(hdr[:])
	var t bytes.Buffer
	if err := tree.WriteSnapshot(&t); err != nil {
		return nil, err
	}
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(t.Len()))
	buf.Write(n[:])
	buf.Write(t.Bytes())
	if err := sessions.Encode(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ReadState decodes a state machine snapshot; every error says what is wrong with it.
func ReadState(r io.Reader, opts datatree.Options) (*State, error) {
	var hdr [16]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("persistence: state snapshot header: %w", err)
	}
	if string(hdr[:4]) != stateMagic {
		return nil, fmt.Errorf("persistence: not a zkraft state snapshot (magic %q)", hdr[:4])
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != stateVersion {
		return nil, fmt.Errorf("persistence: state snapshot version %d, this zkraft reads %d", v, stateVersion)
	}
	st := &State{Zxid: int64(binary.BigEndian.Uint64(hdr[8:]))}
	var n [8]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, fmt.Errorf("persistence: state snapshot tree length: %w", err)
	}
	var err error
	if st.Tree, err = datatree.ReadSnapshot(io.LimitReader(r, int64(binary.BigEndian.Uint64(n[:]))), opts); err != nil {
		return nil, fmt.Errorf("persistence: state snapshot tree: %w", err)
	}
	if st.Sessions, err = session.DecodeTable(r); err != nil {
		return nil, fmt.Errorf("persistence: state snapshot sessions: %w", err)
	}
	return st, nil
}
