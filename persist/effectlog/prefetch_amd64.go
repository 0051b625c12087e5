package effectlog

// prefetch asks the CPU to bring p's cache line into its caches, without
// waiting for it and without faulting (prefetch_amd64.s).
//
//go:noescape
func prefetch(p *byte)
