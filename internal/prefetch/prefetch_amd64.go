package prefetch

// Line brings p's cache line into the CPU's caches, without waiting for it
// and without faulting (prefetch_amd64.s).
//
//go:noescape
func Line(p *byte)
