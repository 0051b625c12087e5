package cell

// cmdCache is a connection's memory of the command names it sent last and
// what they resolved to, by the exact bytes sent: comparing a few bytes is
// cheaper than lower-casing a name and a map lookup (about 40 ns, hashing
// included). One entry served a pipeline that repeats one command; a
// pipeline of MULTI blocks names several in turn (W1: MULTI, ZADD,
// ZREMRANGEBYSCORE, ZCARD, EXPIRE, EXEC), which the few entries here
// hold together. The tables are fixed once the server is built
// (rename-command is a startup option), so an entry never goes stale.
type cmdCache struct {
	names [cmdCacheSize][cmdCacheName]byte
	lens  [cmdCacheSize]uint8
	cmds  [cmdCacheSize]*Command
	next  uint8 // the entry the next miss replaces
}

const (
	cmdCacheSize = 8
	cmdCacheName = 24 // longer names are looked up each time
)

// lookup resolves name as s.lookupCommand does (nil: no such command),
// from the cache when it holds name.
func (k *cmdCache) lookup(s *Server, name []byte) *Command {
	n := len(name)
	for i := range k.cmds {
		if int(k.lens[i]) == n && k.cmds[i] != nil && string(k.names[i][:n]) == string(name) {
			return k.cmds[i]
		}
	}
	cmd := s.lookupCommand(name) // rename-command applied (command_rename.go)
	if cmd != nil && n <= cmdCacheName {
		i := k.next
		k.next = (k.next + 1) % cmdCacheSize
		copy(k.names[i][:], name)
		k.lens[i], k.cmds[i] = uint8(n), cmd
	}
	return cmd
}
