// Package clusterbus speaks Redis Cluster's node-to-node protocol, the
// "cluster bus" every node serves on its port + 10000, as Redis 7.0 does,
// so that cellserver nodes form clusters with redis-cli --cluster and sit
// in clusters with redis-server nodes.
//
// msg.go is the wire format: a fixed 2256-byte header (signature "RCmb",
// total length, version 1, the sender's ports, epochs, replication offset,
// name, slot bitmap, master, address, flags, the cluster state it sees)
// followed by a body per type (gossip sections and extensions for
// PING/PONG/MEET, a node name for FAIL, channel and message for PUBLISH,
// an epoch, name and bitmap for UPDATE, a module payload for MODULE). The
// decoder checks every length as Redis's clusterProcessPacket does; any
// message that fails is ErrBadMessage, and its link is closed. The package
// imports nothing of cellserver.
package clusterbus
