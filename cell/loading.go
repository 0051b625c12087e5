package cell

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Loading the store at start, as Redis loads its RDB or AOF: the server
// already listens (OpenStore, then Load), answers commands without the
// loading flag and PING with -LOADING (dispatch), reports loading:1 and
// its progress in INFO persistence and /metrics, and logs the progress
// every second. What reads the keyspace while it loads (INFO keyspace,
// the figures summed over shards) reads nothing: the loader fills the
// shards without their locks.

// loadProgress is what INFO's loading_* fields report. The loader writes
// it, INFO reads it from other goroutines.
type loadProgress struct {
	start     atomic.Int64 // Unix s (loading_start_time)
	snapBytes atomic.Int64 // the snapshot's size on disk
	logBytes  atomic.Int64 // the log's size past the checkpoint
	keysHint  atomic.Int64 // keys the snapshot held at its checkpoint, 0: unknown
	keys      atomic.Int64 // snapshot records read, published every loadStep
	snapDone  atomic.Bool  // the snapshot is read; the log's replay runs
	n         int64        // records read; loader only
	slow      time.Duration
}

// loadStep is how many records the loader reads between updates of the
// progress (and naps under SlowLoad).
const loadStep = 1000

// record counts one record of the snapshot read.
func (p *loadProgress) record() {
	p.n++
	if p.n%loadStep == 0 {
		p.keys.Store(p.n)
		if p.slow > 0 {
			time.Sleep(p.slow)
		}
	}
}

// measureLoad sets the figures INFO reports from the moment the server
// is loading (OpenStore), before Load reads anything: a client answered
// -LOADING sees loading_total_bytes too, as Redis sets both at once.
func (s *Server) measureLoad() {
	p := &s.loadProgress
	p.start.Store(time.Now().Unix())
	p.snapBytes.Store(int64(s.store.SnapshotSize()))
	p.logBytes.Store(s.store.LogSize())
	p.keysHint.Store(s.keysHint())
}

// loadWithProgress runs loadStore with the progress reported; Load ends
// the loading state.
func (s *Server) loadWithProgress() error {
	p := &s.loadProgress
	p.slow = s.cfg.SlowLoad
	s.log.Info("persistence: loading", "dir", s.store.Path(), "snapshot_bytes", p.snapBytes.Load(),
		"log_bytes", p.logBytes.Load(), "keys_expected", p.keysHint.Load())
	done := make(chan struct{})
	go s.logLoadProgress(done)
	err := s.loadStore()
	close(done)
	return err
}

// logLoadProgress logs the progress every second until done.
func (s *Server) logLoadProgress(done chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			loaded, total, perc, eta := s.loadFigures()
			s.log.Info("persistence: loading", "loaded_bytes", loaded, "total_bytes", total,
				"perc", strconv.FormatFloat(perc, 'f', 2, 64), "eta_seconds", eta,
				"snapshot_keys", s.loadProgress.keys.Load())
		}
	}
}

// loadFigures are Redis's loading_loaded_bytes, loading_total_bytes,
// loading_loaded_perc and loading_eta_seconds. The snapshot's part is
// estimated from the records read against the key count of its checkpoint;
// the log's is the bytes replayed.
func (s *Server) loadFigures() (loaded, total int64, perc float64, eta int64) {
	p := &s.loadProgress
	snap, logb := p.snapBytes.Load(), p.logBytes.Load()
	total = snap + logb
	switch {
	case p.snapDone.Load():
		loaded = snap + min(s.store.ReplayedBytes(), logb)
	case p.keysHint.Load() > 0:
		loaded = min(snap, int64(float64(snap)*float64(p.keys.Load())/float64(p.keysHint.Load())))
	}
	if total > 0 {
		perc = float64(loaded) * 100 / float64(total)
	}
	// Redis's estimate: the time so far scaled by what is left.
	if elapsed := time.Now().Unix() - p.start.Load(); elapsed == 0 {
		eta = 1
	} else {
		eta = elapsed * (total - loaded) / (loaded + 1)
	}
	return loaded, total, perc, eta
}

// keysHint sums the key counts the last checkpoint recorded.
func (s *Server) keysHint() int64 {
	hint, ok := s.store.Meta(keyCountsMeta)
	if !ok {
		return 0
	}
	var n int64
	for _, f := range strings.Split(string(hint), ",") {
		if k, err := strconv.ParseInt(f, 10, 64); err == nil && k > 0 {
			n += k
		}
	}
	return n
}

// loadedTotal is the keys the keyspace holds after the load, for its
// closing log line.
func (s *Server) loadedTotal() int {
	n := 0
	for d := range s.ks.DBs() {
		n += s.ks.CountKeys(d)
	}
	return n
}

// infoLoading adds INFO persistence's loading_* fields while loading.
func infoLoading(s *Server, b *strings.Builder) {
	if !s.loading.Load() {
		return
	}
	loaded, total, perc, eta := s.loadFigures()
	field(b, "loading_start_time", itoa(s.loadProgress.start.Load()))
	field(b, "loading_total_bytes", itoa(total))
	field(b, "loading_rdb_used_mem", "0")
	field(b, "loading_loaded_bytes", itoa(loaded))
	field(b, "loading_loaded_perc", strconv.FormatFloat(perc, 'f', 2, 64))
	field(b, "loading_eta_seconds", itoa(eta))
}
