package cell

import "github.com/cellserver/cellserver/resp"

// parseElemScan parses the options of HSCAN and ZSCAN, [MATCH pattern]
// [COUNT count], as Redis's scanGenericCommand: a COUNT that is not an
// integer, then one below 1 (a syntax error), any other word a syntax
// error. COUNT is checked and not used: the whole value is one step.
// usePat is false for no pattern or "*".
func parseElemScan(x *Ctx) (pat []byte, usePat, ok bool) {
	for i := 3; i < len(x.Args); i += 2 {
		a, more := x.Args[i], i+1 < len(x.Args)
		switch {
		case optIs(a, "count") && more:
			n, ok := resp.ParseInt(x.Args[i+1])
			if !ok {
				x.Error(ErrNotInteger)
				return nil, false, false
			}
			if n < 1 {
				x.Error(ErrSyntax)
				return nil, false, false
			}
		case optIs(a, "match") && more:
			pat = x.Args[i+1]
			usePat = !(len(pat) == 1 && pat[0] == '*')
		default:
			x.Error(ErrSyntax)
			return nil, false, false
		}
	}
	return pat, usePat, true
}

// elemScanCursor checks an HSCAN/SSCAN/ZSCAN cursor, which is read before
// the key; false: the error is written.
func elemScanCursor(x *Ctx) bool {
	if _, ok := parseCursor(x.Args[2]); !ok {
		x.Error(ErrInvalidCursor)
		return false
	}
	return true
}

// emptyElemScan is the reply for a missing key, given before any option
// is read, as Redis gives it.
func emptyElemScan(x *Ctx) {
	x.W.Array(2)
	x.W.BulkString("0")
	x.W.Array(0)
}
