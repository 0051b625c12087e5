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
	last  uint8 // the entry of the last lookup
	next  uint8 // the entry the next miss replaces
}

const (
	cmdCacheSize = 8
	cmdCacheName = 24 // longer names are looked up each time
)

// lookup resolves name as s.lookupCommand does (nil: no such command),
// from the cache when it holds name. It tries the last entry used and the
// one after it first: a pipeline repeats one command, or cycles through
// the same few in the order they were entered.
func (k *cmdCache) lookup(s *Server, name []byte) *Command {
	if k.holds(k.last, name) {
		return k.cmds[k.last]
	}
	if i := (k.last + 1) % cmdCacheSize; k.holds(i, name) {
		k.last = i
		return k.cmds[i]
	}
	return k.miss(s, name)
}

// holds reports whether entry i is name's.
func (k *cmdCache) holds(i uint8, name []byte) bool {
	return int(k.lens[i]) == len(name) && k.cmds[i] != nil && string(k.names[i][:len(name)]) == string(name)
}

// miss is lookup past its first two tries.
func (k *cmdCache) miss(s *Server, name []byte) *Command {
	for i := range uint8(cmdCacheSize) {
		if k.holds(i, name) {
			k.last = i
			return k.cmds[i]
		}
	}
	cmd := s.lookupCommand(name) // rename-command applied (command_rename.go)
	if cmd != nil && len(name) <= cmdCacheName {
		i := k.next
		k.next = (k.next + 1) % cmdCacheSize
		copy(k.names[i][:], name)
		k.lens[i], k.cmds[i], k.last = uint8(len(name)), cmd, i
	}
	return cmd
}
