package cell

import (
	"strconv"
	"sync"
	"sync/atomic"
)

// serverStats are the INFO stats counters that are not per shard, per
// client or per command.
type serverStats struct {
	connections    atomic.Int64 // total_connections_received
	rejectedConns  atomic.Int64 // rejected_connections
	closedCommands atomic.Int64 // commands of clients that have gone
	errorReplies   atomic.Int64 // total_error_replies
	// commandsBase is total_commands_processed at the last CONFIG
	// RESETSTAT: the per-client counters are never reset.
	commandsBase atomic.Int64
	// expiredBase is the shards' expired-key total at the last RESETSTAT.
	expiredBase atomic.Int64
	// closed: the net and lookup counts of clients that have gone; base:
	// all clients' totals at the last RESETSTAT (stats_sample.go).
	closed, base connCounts
	// inst: the instantaneous_* rates the sampler computed.
	inst instantRates

	mu     sync.Mutex
	errors map[string]int64 // errorstat_<CODE>
}

// countError counts an error reply under its code, the text up to the first
// space, as Redis's errorstats do.
func (st *serverStats) countError(msg string) {
	st.errorReplies.Add(1)
	code := msg
	for i := 0; i < len(msg); i++ {
		if msg[i] == ' ' {
			code = msg[:i]
			break
		}
	}
	st.mu.Lock()
	if st.errors == nil {
		st.errors = map[string]int64{}
	}
	if len(st.errors) < 128 || st.errors[code] > 0 { // Redis caps distinct codes at 128
		st.errors[code]++
	}
	st.mu.Unlock()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
