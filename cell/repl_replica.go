package cell

import "strings"

// The replica side: not yet served. A server is always a master.

func (s *Server) isReplica() bool { return false }

func (s *Server) replicaRole(x *Ctx) {}

// replicaAck answers REPLCONF GETACK on a replica's link to its master;
// false: this connection is no such link.
func (s *Server) replicaAck(x *Ctx) bool { return false }

func (s *Server) infoReplicaFields(b *strings.Builder) {}
