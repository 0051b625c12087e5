package script

import (
	"context"
	"testing"

	"github.com/cellserver/cellserver/resp"
)

func BenchmarkRunCall(b *testing.B) {
	s, _ := testEngine.Load([]byte("return redis.call('ping')"))
	w := resp.NewWriter()
	h := &fakeHost{}
	for b.Loop() {
		w.Reset()
		h.calls = h.calls[:0]
		testEngine.Run(context.Background(), s, nil, nil, h, w)
	}
}
