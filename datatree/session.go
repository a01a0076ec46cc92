package datatree

// CloseSession deletes every ephemeral the session owns, in sorted path order, and
// returns the events (DataTree.killSession). No ACL is checked: the session's end
// removes its nodes whoever may delete them. Ephemerals have no children, so the
// order never matters for success, only for the event list.
func (t *Tree) CloseSession(tx Txn, session int64) []Event {
	set := t.ephemerals[session]
	if len(set) == 0 {
		return nil
	}
	var events []Event
	for _, path := range sortedKeys(set) {
		parentPath, _, ok := splitParent(path)
		if !ok {
			continue
		}
		n, parent := t.lookup(path), t.lookup(parentPath)
		if n == nil || parent == nil || n.kids != 0 {
			continue
		}
		events = append(events, t.removeNode(tx.Zxid, parentPath, parent, path, n, childPlace{})...)
	}
	return events
}
