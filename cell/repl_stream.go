package cell

import (
	"math"
	"strconv"

	"github.com/cellserver/cellserver/cell/keyspace"
	"github.com/cellserver/cellserver/rdb"
)

// The replication stream carries effects, as Redis 7 replicates scripts:
// for every key an execution changed (keyspace.Journal), the commands
// that make a replica's key what the master's key is now, read from the
// keyspace while the execution's shards are still locked. A string is a
// SET (PXAT for its expiry), a missing key a DEL (expired keys too, as
// Redis 7 propagates them), a hash, list or sorted set a DEL and its
// rebuild (HSET, RPUSH, SADD, ZADD) then PEXPIREAT. Each command states a key's
// whole value, so replaying the stream from any earlier point of a
// snapshot converges on the master's state: a full resync can send the
// keyspace a shard at a time while clients keep writing. So a redis-server
// replica, which has no CL.THROTTLE, holds what the throttle wrote.
// More than one command from one execution is wrapped in MULTI/EXEC.

// replCmd appends args as one RESP array.
func replCmd(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = replBulk(b, a)
	}
	return b
}

func replBulk(b, a []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(a)), 10)
	b = append(b, '\r', '\n')
	b = append(b, a...)
	return append(b, '\r', '\n')
}

// replHeader starts a RESP array of n elements.
func replHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

// formatScore writes a score as a replica parses it back bit for bit.
func formatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

// effectCmds appends the commands that make db's key hold e (nil: no
// key), and returns how many it appended.
func effectCmds(b []byte, key []byte, e *keyspace.Entry) ([]byte, int) {
	if e == nil {
		return replCmd(b, []byte("DEL"), key), 1
	}
	v, ok := entryValue(e)
	if !ok {
		return replCmd(b, []byte("DEL"), key), 1
	}
	var exp []byte
	if e.Exp != 0 {
		exp = strconv.AppendInt(nil, e.Exp, 10)
	}
	if v.Type == rdb.TypeString {
		if exp != nil {
			return replCmd(b, []byte("SET"), key, v.Str, []byte("PXAT"), exp), 1
		}
		return replCmd(b, []byte("SET"), key, v.Str), 1
	}
	b = replCmd(b, []byte("DEL"), key)
	n := 2
	switch v.Type {
	case rdb.TypeHash, rdb.TypeList, rdb.TypeSet:
		name := []byte("RPUSH")
		switch v.Type {
		case rdb.TypeHash:
			name = []byte("HSET") // Elems alternate field, value
		case rdb.TypeSet:
			name = []byte("SADD")
		}
		b = replHeader(b, 2+len(v.Elems))
		b = replBulk(b, name)
		b = replBulk(b, key)
		for _, el := range v.Elems {
			b = replBulk(b, el)
		}
	case rdb.TypeZSet:
		b = replHeader(b, 2+2*len(v.Elems))
		b = replBulk(b, []byte("ZADD"))
		b = replBulk(b, key)
		for i, el := range v.Elems {
			b = replBulk(b, formatScore(v.Scores[i]))
			b = replBulk(b, el)
		}
	}
	if exp != nil {
		b = replCmd(b, []byte("PEXPIREAT"), key, exp)
		n++
	}
	return b, n
}

// streamJournal appends to b the stream of what j noted, and returns how
// many commands; db is the database the stream has selected (-1: none),
// updated. The keys' shards must be locked.
func streamJournal(b []byte, ks *keyspace.Keyspace, j *keyspace.Journal, db *int) ([]byte, int) {
	cmds := 0
	for _, e := range j.Entries() {
		if e.DB != *db {
			b = replCmd(b, []byte("SELECT"), strconv.AppendInt(nil, int64(e.DB), 10))
			*db = e.DB
		}
		if e.Flush {
			b = replCmd(b, []byte("FLUSHDB"))
			cmds++
			continue
		}
		var n int
		b, n = effectCmds(b, j.Key(e), ks.PeekLocked(e.DB, j.Key(e)))
		cmds += n
	}
	return b, cmds
}

var (
	multiCmd = replCmd(nil, []byte("MULTI"))
	execCmd  = replCmd(nil, []byte("EXEC"))
)
