package cell

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cellserver/cellserver/persist/effectlog"
)

// A damaged effect log at start (persist/effectlog's Open): a torn tail
// is cut and the server starts; damage in the middle of the log stops the
// start unless effectlog-load-damaged is skip, which drops exactly the
// damaged records and reports them (loadStore's log line, INFO
// persistence's aof_last_load_* fields).

// The values of effectlog-load-damaged.
const (
	LoadDamagedRefuse = "refuse"
	LoadDamagedSkip   = "skip"
)

// loadDamaged is the effectlog-load-damaged setting of the start.
func (s *Server) loadDamaged() string {
	if v := s.configValue("effectlog-load-damaged"); v != "" {
		return v
	}
	return LoadDamagedRefuse
}

// explainDamage adds to the error of a start refused for a damaged log
// the setting that starts anyway, and what it costs.
func explainDamage(err error) error {
	var de *effectlog.DamageError
	if !errors.As(err, &de) {
		return err
	}
	return fmt.Errorf("%w; to start without the damaged records (their loss is logged and shown in INFO persistence), "+
		"set effectlog-load-damaged %s (--effectlog-load-damaged %s), or restore the directory from a backup",
		err, LoadDamagedSkip, LoadDamagedSkip)
}

// noteLoadDamage records what the start dropped: bad records that did
// not decode, and the store's account of a damaged log it skipped (each
// stretch of unknown content counting as the one record it held at
// least), and says so in the log.
func (s *Server) noteLoadDamage(bad int) {
	d := s.store.LogDamage()
	s.loadDamage = d
	s.loadCorrupt = int64(bad) + d.Records + int64(d.Unknown)
	if !d.Damaged() {
		return
	}
	s.log.Warn("persistence: started without the damaged records of the effect log, as effectlog-load-damaged skip asks",
		"stretches", d.Stretches, "records", d.Records, "stretches_of_unknown_records", d.Unknown,
		"bytes", d.Bytes, "keys", d.KeyCount, "some_keys", strings.Join(d.Keys, " "))
}
