package cell

import (
	"runtime/debug"
	"sync/atomic"

	"github.com/cellserver/cellserver/cell/keyspace"
)

// Big arguments (up to proto-max-bulk-len, 512 MB by default) are read
// into a buffer of exactly their size (resp.Reader), so that one in
// flight costs its size, not the twice-and-more of a doubling buffer.
// Two more things keep memory near Redis's, which stores the argument it
// read as the value and frees it on close: SET and its family keep such an
// argument as the value instead of copying it (SetString below), and a
// connection that ends holding a big buffer (an unfinished upload) has its
// buffers dropped and the heap's free memory given back to the system.

// returnAfter is the most buffer a closing connection may drop without
// making the server give memory back to the system.
const returnAfter = 16 << 20

// SetString is keyspace.Tx.SetString, except that a value which is a big
// argument the connection read into a buffer of its own is kept as it is,
// not copied: a 500 MB SET holds the value once, not twice. Every SET
// family handler stores through here.
func (x *Ctx) SetString(key, val []byte, exp int64) *keyspace.Entry {
	if x.cl != nil && x.cl.rd != nil && x.cl.rd.Take(val) {
		return x.Tx.SetStringOwned(key, val, exp)
	}
	return x.Tx.SetString(key, val, exp)
}

// memReturn coalesces requests to give free memory back to the system.
type memReturn struct {
	running, again atomic.Bool
}

// returnMemory gives the heap's free memory back to the system soon,
// from a goroutine of its own: one full collection and scavenge at a
// time, however many connections ask meanwhile. It is for after a big
// buffer was dropped; the Go runtime would otherwise keep the pages for
// minutes, until the next collection and its slow background scavenger.
// A collection costs milliseconds per hundred MB of live heap, and
// connections that end in the middle of a big argument are rare.
func (s *Server) returnMemory() {
	s.memReturn.again.Store(true)
	if !s.memReturn.running.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for s.memReturn.again.Swap(false) {
			debug.FreeOSMemory()
		}
		s.memReturn.running.Store(false)
		if s.memReturn.again.Load() { // asked between the loop and the flag
			s.returnMemory()
		}
	}()
}
