package cell

import "github.com/cellserver/cellserver/resp"

// parseMpop parses the arguments of LMPOP and ZMPOP, numkeys key [key ...]
// first|second [COUNT count], in Redis's order: numkeys (an integer of at
// least 1), the word after the keys (a syntax error if missing or neither
// first nor second), then one COUNT of at least 1. It returns the keys,
// whether the word was second, and the count (1 without COUNT); ok false
// means the error is replied.
func parseMpop(x *Ctx, first, second string) (keys [][]byte, isSecond bool, count int64, ok bool) {
	return parseMpopAt(x, 1, first, second)
}

// parseMpopAt is parseMpop with numkeys at args[at] (2 for BLMPOP and
// BZMPOP, after their timeout).
func parseMpopAt(x *Ctx, at int, first, second string) (keys [][]byte, isSecond bool, count int64, ok bool) {
	args := x.Args
	numkeys, ok := resp.ParseInt(args[at])
	if !ok || numkeys < 1 {
		x.Error(ErrNumkeysPositive)
		return nil, false, 0, false
	}
	if numkeys >= int64(len(args)-at-1) {
		x.Error(ErrSyntax)
		return nil, false, 0, false
	}
	where := at + 1 + int(numkeys)
	switch {
	case optIs(args[where], first):
	case optIs(args[where], second):
		isSecond = true
	default:
		x.Error(ErrSyntax)
		return nil, false, 0, false
	}
	count = -1
	for j := where + 1; j < len(args); j++ {
		if count == -1 && optIs(args[j], "count") && j+1 < len(args) {
			j++
			if count, ok = resp.ParseInt(args[j]); !ok || count < 1 {
				x.Error(ErrCountPositive)
				return nil, false, 0, false
			}
			continue
		}
		x.Error(ErrSyntax)
		return nil, false, 0, false
	}
	if count == -1 {
		count = 1
	}
	return args[at+1 : where], isSecond, count, true
}
