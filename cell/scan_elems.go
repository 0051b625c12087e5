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
