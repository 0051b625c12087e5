package effectlog

import (
	"testing"
)

// BenchmarkAppend is the cost of one 100-byte record: it must not allocate.
func BenchmarkAppend(b *testing.B) {
	l, _ := openLog(b, b.TempDir(), 0)
	defer l.Close()
	p := payloadFor(1, 100)
	b.ReportAllocs()
	b.SetBytes(int64(len(p)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendParallel is Append from GOMAXPROCS goroutines at once:
// the cost of the append mutex under contention.
func BenchmarkAppendParallel(b *testing.B) {
	l, _ := openLog(b, b.TempDir(), 0)
	defer l.Close()
	b.ReportAllocs()
	b.SetBytes(100)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p := payloadFor(2, 100)
		for pb.Next() {
			if _, err := l.Append(p); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAppendSync is Append plus Sync of each record from 8
// goroutines per CPU, like connections under appendfsync always: fsyncs/op
// shows how many callers one fsync serves.
func BenchmarkAppendSync(b *testing.B) {
	l, _ := openLog(b, b.TempDir(), 0)
	defer l.Close()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		p := payloadFor(3, 100)
		for pb.Next() {
			end, err := l.Append(p)
			if err == nil {
				err = l.Sync(end)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(l.syncRounds.Load())/float64(b.N), "fsyncs/op")
}
