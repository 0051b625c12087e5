package resp

import (
	"strings"
	"testing"
)

func TestParseLongDouble(t *testing.T) {
	good := []string{"0", "-0", "1", "1.5", ".5", "5.", "1e400", "-1e4000", "0x10", "0x1.8p1", "inf", "-INF",
		"Infinity", "1e-4950", "123456789012345678901234567890", "+1", "00012"}
	bad := []string{"", " 1", "1 ", "\t1", "abc", "1e", "0x", "nan", "-nan", "1_000", "--1", "1e5000", "-1e5000",
		"1e-5000", "infinit", "1.2.3", "+", "-", ".", "1\x00", "\x00", strings.Repeat("1", 5120)}
	for _, s := range good {
		if _, ok := ParseLongDouble([]byte(s)); !ok {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range bad {
		if _, ok := ParseLongDouble([]byte(s)); ok {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestLongDoubleSum checks INCRBYFLOAT's bytes against replies read off
// redis-server 7.0.15 on x86-64.
func TestLongDoubleSum(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"10.5", "0.1", "10.6"},
		{"10.6", "5.0e3", "5010.60000000000000009"},
		{"3", "3.0e3", "3003"},
		{"0.1", "0.2", "0.3"},
		{"1", "-1", "0"},
		{"0", "-1e-20", "0"},
		{"0x10", "1", "17"},
		{"1e308", "1e308", "199999999999999999993371759311691291321120199694831134415594095989843469737676123744200253843777078640893494450108026446304269499187921167194841628860392837535918200039206381557326219209014213335878306791577877829121087126122536729803237260434173178506889763247582601711514636284849020905456510092687857156096"},
		{"1e400", "0", "10000000000000000000281880683947586514586453433629052038625910693539685534008629862039363994848324160522094053927317616200295822777259255734023828976593340661017797447434546173917862448116674971723778943824391593338047470675026246684401359237513603830343735485505244955964979021825038280091068414947402456898653040951017512658092615827588920183472511643316591362664138176309734806343732497430221946880"},
	} {
		a, ok1 := ParseLongDouble([]byte(tc.a))
		b, ok2 := ParseLongDouble([]byte(tc.b))
		if !ok1 || !ok2 {
			t.Fatalf("%s + %s: parse failed", tc.a, tc.b)
		}
		s, ok := AddLongDouble(a, b)
		if !ok {
			t.Fatalf("%s + %s: add failed", tc.a, tc.b)
		}
		if got := string(AppendLongDouble(nil, s)); got != tc.want {
			t.Errorf("%s + %s = %s, want %s", tc.a, tc.b, got, tc.want)
		}
	}
	for _, tc := range [][2]string{{"inf", "1"}, {"1", "-inf"}, {"1e4932", "1e4932"}} {
		a, _ := ParseLongDouble([]byte(tc[0]))
		b, _ := ParseLongDouble([]byte(tc[1]))
		if _, ok := AddLongDouble(a, b); ok {
			t.Errorf("%s + %s accepted", tc[0], tc[1])
		}
	}
}

func FuzzLongDouble(f *testing.F) {
	for _, s := range []string{"1", "1e400", "0x1p-16445", "1e-4951", "-.5e-3", "inf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseLongDouble([]byte(s))
		if !ok {
			return
		}
		if sum, ok := AddLongDouble(v, v); ok {
			AppendLongDouble(nil, sum)
		}
	})
}
