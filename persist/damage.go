package persist

import (
	"fmt"

	"github.com/cellserver/cellserver/persist/effectlog"
)

// LogDamage is what Open skipped of an effect log damaged in the middle
// (Options.SkipDamagedLog): the server reports it in its log and in INFO.
type LogDamage struct {
	// Stretches of damaged bytes skipped.
	Stretches int
	// Records known to be lost: one per damaged record whose length held.
	Records int64
	// Unknown counts the stretches whose number of records cannot be
	// known (a damaged length, a run of zeros, records missing between
	// files): each lost at least one.
	Unknown int
	// Bytes of log skipped.
	Bytes int64
	// Keys named by the damaged records that still decode far enough
	// (any byte of them may be wrong, names included); Keys lists up
	// to ten of them.
	KeyCount int64
	Keys     []string
}

// Damaged reports whether anything was skipped.
func (d LogDamage) Damaged() bool { return d.Stretches > 0 }

// LogDamage reports what Open skipped of a damaged effect log.
func (s *Store) LogDamage() LogDamage { return s.damage }

// logDamage sums up the effect log's damage and reads, from each damaged
// record whose length held, the keys it still names.
func (s *Store) logDamage() LogDamage {
	var d LogDamage
	for _, x := range s.elog.Damaged() {
		d.Stretches++
		d.Bytes += x.Bytes
		switch {
		case x.Records > 0:
			d.Records += int64(x.Records)
		case !x.Header:
			d.Unknown++
		}
	}
	if d.Stretches == 0 {
		return d
	}
	seen := map[string]bool{}
	var e Effect
	err := s.elog.EachDamaged(func(_ effectlog.Damage, payload []byte) {
		walkEffects(payload, &e, func(e *Effect) error {
			if e.Kind == EffectFlushDB || e.Kind == EffectEnd || e.DB < 0 {
				return nil
			}
			k := fmt.Sprintf("%d/%q", e.DB, e.Key)
			if !seen[k] {
				seen[k] = true
				if len(d.Keys) < 10 {
					d.Keys = append(d.Keys, k)
				}
			}
			return nil
		})
	})
	if err != nil {
		s.log.Warn("persistence: reading the damaged log records", "err", err)
	}
	d.KeyCount = int64(len(seen))
	return d
}
