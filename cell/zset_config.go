package cell

import (
	"math/rand/v2"

	"github.com/cellserver/cellserver/zsetlite"
)

// zsetConfig is zset-max-listpack-entries and -value as CONFIG holds them
// now. Redis reads the two globals at every insert, so a CONFIG SET changes
// where existing sets convert too; handlers pass this to SetConfig before
// inserting for the same effect.
func (x *Ctx) zsetConfig() zsetlite.Config { return x.srv.zsetConfig() }

// zsetConfig is the sorted-set thresholds in force.
func (s *Server) zsetConfig() zsetlite.Config {
	return zsetlite.Config{
		MaxListpackEntries: int(s.live.zsetMaxListpackEntries.Load()),
		MaxListpackValue:   int(s.live.zsetMaxListpackValue.Load()),
	}
}

// globalRand is math/rand/v2's shared source as a zsetlite.Rand: safe for
// concurrent use and, being empty, free to pass as an interface.
type globalRand struct{}

func (globalRand) IntN(n int) int { return rand.IntN(n) }
