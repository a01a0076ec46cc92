package persistence

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/zkraft/zkraft/datatree"
	"github.com/zkraft/zkraft/session"
)

// The state machine snapshot (state.bin of a Raft snapshot), version 2. Big-endian.
//
//	magic     4 bytes "ZKRS"
//	version   uint32 (2)
//	zxid      uint64: the last entry the state includes (= the Raft snapshot's index)
//	sessLen   uint64, then the session table in session's snapshot format (its own
//	          magic, version and CRC-32C; see session/table.go)
//	tree      to the end: the tree in datatree's snapshot format (its own magic
//	          "ZKRDTREE", version and CRC-32C; see datatree/snapshot.go)
//
// The tree comes last so it can be streamed from a datatree.Frozen view while writes go
// on. Version 1 (tree length and tree first, then the sessions) is still read. The whole
// file is also covered by the CRC-64 in the Raft snapshot's meta.json, which Open checks
// for the newest snapshot before anything starts from it.
const (
	stateMagic   = "ZKRS"
	stateVersion = 2
)

// State is a decoded state machine snapshot.
type State struct {
	Zxid     int64
	Tree     *datatree.Tree
	Sessions *session.Table
}

// StateHeader returns the bytes of a state snapshot before its tree.
func StateHeader(zxid int64, sessions *session.Table) ([]byte, error) {
	var sess bytes.Buffer
	if err := sessions.Encode(&sess); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 24+sess.Len())
	b = append(b, stateMagic...)
	b = binary.BigEndian.AppendUint32(b, stateVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(zxid))
	b = binary.BigEndian.AppendUint64(b, uint64(sess.Len()))
	return append(b, sess.Bytes()...), nil
}

// EncodeState encodes a whole state snapshot at once (the tree through a Frozen view, so
// the caller holds the tree's write exclusion).
func EncodeState(zxid int64, tree *datatree.Tree, sessions *session.Table) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteState(&buf, zxid, tree, sessions); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteState writes a whole state snapshot to w, as EncodeState encodes it.
func WriteState(w io.Writer, zxid int64, tree *datatree.Tree, sessions *session.Table) error {
	head, err := StateHeader(zxid, sessions)
	if err != nil {
		return err
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	return tree.WriteSnapshot(w)
}

// ReadState decodes a state machine snapshot; every error says what is wrong with it.
func ReadState(r io.Reader, opts datatree.Options) (*State, error) {
	var hdr [24]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("persistence: state snapshot header: %w", err)
	}
	if string(hdr[:4]) != stateMagic {
		return nil, fmt.Errorf("persistence: not a zkraft state snapshot (magic %q)", hdr[:4])
	}
	st := &State{Zxid: int64(binary.BigEndian.Uint64(hdr[8:16]))}
	n := int64(binary.BigEndian.Uint64(hdr[16:]))
	var err error
	switch v := binary.BigEndian.Uint32(hdr[4:8]); v {
	case 1:
		if st.Tree, err = datatree.ReadSnapshot(io.LimitReader(r, n), opts); err != nil {
			return nil, fmt.Errorf("persistence: state snapshot tree: %w", err)
		}
		if st.Sessions, err = session.DecodeTable(r); err != nil {
			return nil, fmt.Errorf("persistence: state snapshot sessions: %w", err)
		}
	case 2:
		if st.Sessions, err = session.DecodeTable(io.LimitReader(r, n)); err != nil {
			return nil, fmt.Errorf("persistence: state snapshot sessions: %w", err)
		}
		if st.Tree, err = datatree.ReadSnapshot(r, opts); err != nil {
			return nil, fmt.Errorf("persistence: state snapshot tree: %w", err)
		}
	default:
		return nil, fmt.Errorf("persistence: state snapshot version %d, this zkraft reads 1 and 2", v)
	}
	return st, nil
}
