// Package jute owns ZooKeeper's wire format: the Jute encoder and a bounds-checked
// decoder, every record of the client protocol (generated from zookeeper.jute), op
// codes, error codes, event types, create flags, permissions, and packet framing.
//
// It imports only the standard library and knows nothing of trees, sessions or sockets.
// Untrusted bytes are decoded with every length checked against what is left of a frame
// that was itself bounded by jute.maxbuffer, so no length prefix allocates memory the
// frame does not hold. A vector count below -1 reads as an empty vector, and, with
// Decoder.AsJava (the server's reader), a string that is not UTF-8 as Java reads it
// (JavaString), both as ZooKeeper's BinaryInputArchive reads them.
package jute
