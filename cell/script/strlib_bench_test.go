package script

import (
	"context"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

// The pattern builtins over a million characters (ARGV[1]), one per run.
func BenchmarkPatterns(b *testing.B) {
	subject := bytesOf('x', 1e6)
	for _, c := range []struct{ name, body string }{
		{"gsub-plain", "local r, n = string.gsub(ARGV[1], 'x', 'y') return n"},
		{"gsub-class", "local r, n = string.gsub(ARGV[1], '.', 'y') return n"},
		{"gsub-capture", "local r, n = string.gsub(ARGV[1], '(x)', '%1y') return n"},
		{"gsub-function", "local r, n = string.gsub(ARGV[1], 'x', function(c) return 'y' end) return n"},
		{"gmatch", "local n = 0 for c in ARGV[1]:gmatch('.') do n = n + 1 end return n"},
		{"find-lazy", "return string.find(ARGV[1], '^.-y')"},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := testEngine.Load([]byte(c.body))
			if err != nil {
				b.Fatal(err)
			}
			w := resp.NewWriter()
			for b.Loop() {
				w.Reset()
				testEngine.Run(context.Background(), s, nil, [][]byte{subject}, &fakeHost{}, w)
			}
		})
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}
