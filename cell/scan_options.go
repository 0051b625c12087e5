package cell

import "github.com/cellserver/cellserver/resp"

// elementScanOptions reads the MATCH and COUNT options of SSCAN and ZSCAN
// (arguments from the fourth on), replying Redis's error when one is bad.
// COUNT is checked and otherwise unused: both reply the whole collection
// at once. usePat is false for no pattern or "*".
func elementScanOptions(x *Ctx) (pat []byte, usePat, ok bool) {
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
